// The built-in data files' YAML is parsed at build time (catalog/preparsed_yaml.hpp): the trees
// rebuilt from that form, and the form read in place (DocValue, StrictMap), must equal the trees
// parsed from the text, for every file, and the form embedded in the binary must be that of the
// file embedded beside it (no stale build).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "catalog/preparsed_yaml.hpp"
#include "catalog/strict_yaml.hpp"
#include "cli/cli.hpp"
#include "core/error.hpp"
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
  // Read in place: the node's header at once, its children when they are read.
  for (const char* bad : {"", "Q", "S1:", "S99999999999:", "L"})
    EXPECT_THROW(DocValue::in_form(bad), std::runtime_error) << bad;
  EXPECT_THROW(DocValue::in_form("L2:S1:a").items(), std::runtime_error);
  EXPECT_THROW(DocValue::in_form("M1:L0:S1:a").entries(), std::runtime_error);
  EXPECT_THROW(form_skip("M1:S1:a", 0), std::runtime_error);
}

// Structural equality of two values read through DocValue (in place or from yaml-cpp).
::testing::AssertionResult same_value(const DocValue& a, const DocValue& b,
                                      const std::string& where) {
  if (a.defined() != b.defined() || a.is_null() != b.is_null() || a.is_scalar() != b.is_scalar() ||
      a.is_sequence() != b.is_sequence() || a.is_map() != b.is_map())
    return ::testing::AssertionFailure() << where << ": kinds differ";
  if (a.scalar() != b.scalar())
    return ::testing::AssertionFailure()
           << where << ": '" << a.scalar() << "' != '" << b.scalar() << "'";
  const auto ia = a.items();
  const auto ib = b.items();
  if (ia.size() != ib.size()) return ::testing::AssertionFailure() << where << ": lengths differ";
  for (std::size_t i = 0; i < ia.size(); ++i)
    if (auto r = same_value(ia[i], ib[i], where + "[" + std::to_string(i) + "]"); !r) return r;
  const auto ea = a.entries();
  const auto eb = b.entries();
  if (ea.size() != eb.size()) return ::testing::AssertionFailure() << where << ": sizes differ";
  for (std::size_t i = 0; i < ea.size(); ++i) {
    if (ea[i].key != eb[i].key || ea[i].key_is_text != eb[i].key_is_text)
      return ::testing::AssertionFailure() << where << ": key " << ea[i].key << " != " << eb[i].key;
    if (auto r = same_value(ea[i].value, eb[i].value, where + "." + std::string(ea[i].key)); !r)
      return r;
  }
  return ::testing::AssertionSuccess();
}

TEST(PreparsedYaml, EveryBuiltInFileReadInPlaceEqualsTheTreeItsTextParsesTo) {
  (void)cli::builtin_data_files();  // registers the forms
  int compared = 0;
  for (const auto& f : embedded::files()) {
    if (!f.path.starts_with("data/") || !f.path.ends_with(".yaml")) continue;
    const std::string path(f.path);
    const DocValue in_place = parse_document(f.text, path);
    const DocValue from_text(parse_text(f.text, path));
    EXPECT_EQ(in_place.line(), 0) << path;  // no lines in a form
    EXPECT_GT(from_text.line(), 0) << path;
    EXPECT_TRUE(same_value(in_place, from_text, path));
    // A part of the form built as a yaml-cpp node (StrictMap::raw) is the text's part.
    for (const DocEntry& e : in_place.entries())
      EXPECT_TRUE(same_tree(e.value.yaml(), from_text.yaml()[std::string(e.key)], path));
    ++compared;
  }
  EXPECT_GT(compared, 40);
}

// What a reader gets from a map through StrictMap, or the error it meets (its line marks cut: a
// form keeps none).
std::string read_all(const DocValue& root) {
  try {
    StrictMap m(root, "t.yaml", "");
    std::string out = m.required_string("name");
    out += "|" + std::to_string(m.required_number("rate", 0, 10));
    out += "|" + std::to_string(m.optional_integer("count", 0, 99).value_or(-1));
    out += "|" + std::string(m.required_bool("on") ? "on" : "off");
    for (const auto& s : m.string_list("tags", false))
      out += "|tag " + s;
    for (auto& item : m.map_list("items", false))
      out += "|item " + item.required_string("id") + (item.is_null("note") ? " null" : "");
    out += "|" + std::to_string(m.is_scalar("name")) + std::to_string(m.is_scalar("items"));
    for (const auto& k : m.keys())
      out += "|key " + k;
    for (auto& item : m.map_list("items", false)) {  // fresh maps: nothing read yet
      item.required_string("id");
      item.known("note");
      item.finish();
    }
    m.finish();
    return out;
  } catch (const UserError& e) {
    std::string text = e.what();
    for (const std::string mark : {" (line ", " (in the map at line "}) {
      const auto at = text.find(mark);
      if (at != std::string::npos) text.erase(at, text.find(')', at) + 1 - at);
    }
    return "error: " + text;
  }
}

TEST(PreparsedYaml, StrictMapReadsAFormInPlaceAsItReadsTheText) {
  const std::vector<std::string> texts = {
      "name: a\nrate: 2.5\non: true\ntags: [x, y]\nitems: [{id: p, note: ~}, {id: q}]\n",
      "name: a\nrate: 2.5\ncount: 7\non: false\ntags: z\n",
      "name: a\nrat: 2.5\non: true\n",                           // misspelt: the hint names it
      "name: a\nrate: 2.5\non: true\nextra: 1\n",                // unknown key
      "name: a\nrate: 20\non: true\n",                           // out of range
      "name: [a]\nrate: 1\non: true\n",                          // not text
      "name: a\nrate: 1\non: yes\n",                             // not a bool
      "name: a\nrate: 1\non: true\nitems: [{id: p, nte: 1}]\n",  // a nested unknown key
      "name: a\nrate: 1\non: true\nitems: [3]\n",                // not a map
      "name: a\nrate: 1\non: true\ntags: [x, [y]]\n",            // a list in a list of text
  };
  for (const std::string& text : texts) {
    const YAML::Node tree = parse_yaml_document(text, "t.yaml");
    const std::string form = preparse_yaml(tree);
    const std::string in_place = read_all(DocValue::in_form(form));
    EXPECT_EQ(in_place, read_all(DocValue(tree))) << text;
    EXPECT_FALSE(in_place.empty());
  }
  EXPECT_EQ(read_all(DocValue::in_form(preparse_yaml(parse_yaml_document(texts[0], "t.yaml")))),
            "a|2.500000|-1|on|tag x|tag y|item p null|item q|10|key name|key rate|key on|"
            "key tags|key items");
  EXPECT_NE(read_all(DocValue::in_form(preparse_yaml(parse_yaml_document(texts[2], "t.yaml"))))
                .find("unknown key 'rat' — did you mean 'rate'?"),
            std::string::npos);
}

}  // namespace
}  // namespace ftplan
