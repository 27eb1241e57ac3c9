// ftplan words: one language's words as the page receives them (GET /api/words?lang=de), from
// data/i18n/<lang>.yaml.
#include "cli/cli.hpp"
#include "render/translations.hpp"

namespace ftplan::cli {
namespace {

const bool registered_words = register_command(
    {"words", "The words of one language (data/i18n): page texts, locale and number style",
     [](CLI::App& app, Context& ctx) {
       auto lang = std::make_shared<std::string>("en");
       auto json_out = std::make_shared<bool>(false);
       app.add_option("--lang", *lang, "Language: en | de (default en)");
       app.add_flag("--json", *json_out, "Print JSON");
       return [&ctx, lang, json_out] {
         const Translations t = load_translations(ctx.catalog(), parse_report_lang(*lang));
         if (*json_out) {
           print_json(ctx, "words", page_words_json(t));
           return;
         }
         ctx.out << t.name << " (" << t.locale << "), decimal mark '" << t.number.decimal_mark
                 << "', group mark '" << t.number.group_mark << "'\n";
         for (const auto& [key, text] : t.page)
           ctx.out << key << ": " << text << "\n";
       };
     },
     95});

}  // namespace
}  // namespace ftplan::cli
