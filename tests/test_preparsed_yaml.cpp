// The built-in data files' YAML is parsed at build time (catalog/preparsed_yaml.hpp): the trees
// rebuilt from that form must equal the trees parsed from the text, for every file, and the form
// embedded in the binary must be that of the file embedded beside it (no stale build).
#include <gtest/gtest.h>

#include <string>

#include "catalog/preparsed_yaml.hpp"
#include "catalog/strict_yaml.hpp"
#include "cli/cli.hpp"
#include "embedded_files.hpp"

namespace ftplan {
namespace {

// Structural equality: types, scalars, list order, map keys in order with equal values.
::testing::AssertionResult same_tree(const YAML::Node& a, const YAML::Node& b,
                                     const std::string& where) {
  if (a.Type() != b.Type()) return ::testing::AssertionFailure() << where << ": node types differ";
  if (a.IsScalar() && a.Scalar() != b.Scalar())
    return ::testing::AssertionFailure()
           << where << ": '" << a.Scalar() << "' != '" << b.Scalar() << "'";
  if (a.IsSequence() || a.IsMap()) {
    if (a.size() != b.size()) return ::testing::AssertionFailure() << where << ": sizes differ";
    auto ia = a.begin();
    auto ib = b.begin();
    for (std::size_t i = 0; i < a.size(); ++i, ++ia, ++ib) {
      if (a.IsSequence()) {
        if (auto r = same_tree(*ia, *ib, where + "[" + std::to_string(i) + "]"); !r) return r;
      } else {
        if (auto r = same_tree(ia->first, ib->first, where + " key"); !r) return r;
        if (auto r = same_tree(ia->second, ib->second, where + "." + ia->first.Scalar()); !r)
          return r;
      }
    }
  }
  return ::testing::AssertionSuccess();
}

YAML::Node parse_text(std::string_view text, const std::string& path) {
  // A copy: the built-in text's own address is registered and would take the preparsed path.
  const std::string copy(text);
  return parse_yaml_document(copy, path);
}

TEST(PreparsedYaml, EveryBuiltInYamlFileRebuildsToTheTreeItsTextParsesTo) {
  int compared = 0;
  for (const auto& f : embedded::files()) {
    if (!f.path.starts_with("data/") || !f.path.ends_with(".yaml")) continue;
    const std::string path(f.path);
    const YAML::Node from_text = parse_text(f.text, path);
    EXPECT_TRUE(same_tree(from_text, node_from_preparsed(preparse_yaml(from_text)), path));
    ++compared;
  }
  EXPECT_GT(compared, 40);  // the cards alone are more
}

TEST(PreparsedYaml, TheEmbeddedFormsAreThoseOfTheEmbeddedFiles) {
  (void)cli::builtin_data_files();  // registers the forms
  int checked = 0;
  for (const auto& f : embedded::files()) {
    if (!f.path.starts_with("data/") || !f.path.ends_with(".yaml")) continue;
    const std::string_view form = preparsed_form(f.text);
    ASSERT_FALSE(form.empty()) << f.path << " has no preparsed form";
    EXPECT_EQ(form, preparse_yaml(parse_text(f.text, std::string(f.path)))) << f.path;
    EXPECT_TRUE(same_tree(parse_yaml_document(f.text, std::string(f.path)),
                          parse_text(f.text, std::string(f.path)), std::string(f.path)));
    ++checked;
  }
  EXPECT_GT(checked, 40);
}

TEST(PreparsedYaml, NullsEmptyCollectionsAndUnicodeSurviveTheRoundTrip) {
  const std::string text =
      "a: ~\nb: []\nc: {}\nd: [1, 'two', {e: null}]\nf: \"Grüße: 3 µs\"\n"
      "g: \"\"\nh:\n  - - x\n    - y\n";
  const YAML::Node tree = parse_yaml_document(text, "t.yaml");
  const YAML::Node back = node_from_preparsed(preparse_yaml(tree));
  EXPECT_TRUE(same_tree(tree, back, "t.yaml"));
  EXPECT_TRUE(back["a"].IsNull());
  EXPECT_TRUE(back["b"].IsSequence());
  EXPECT_EQ(back["b"].size(), 0u);
  EXPECT_TRUE(back["c"].IsMap());
  EXPECT_EQ(back["f"].as<std::string>(), "Grüße: 3 µs");
  EXPECT_EQ(back["g"].as<std::string>(), "");
  EXPECT_EQ(back["h"][0][1].as<std::string>(), "y");
}

TEST(PreparsedYaml, AMalformedFormIsAnErrorNotACrash) {
  for (const char* bad : {"", "S5:abc", "L2:S1:a", "M1:L0:S1:a", "Q", "S1:ab", "S99999999999:"})
    EXPECT_THROW(node_from_preparsed(bad), std::runtime_error) << bad;
}

}  // namespace
}  // namespace ftplan
