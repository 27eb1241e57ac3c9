// The report document as one self-contained HTML file: inline CSS, inline SVG charts, no script,
// no font, image or link that leaves the file (its Content-Security-Policy forbids any fetch).
#include <fmt/format.h>

#include "render/html_escape.hpp"
#include "render/report.hpp"

namespace ftplan {

namespace {

constexpr std::string_view kStyle = R"(
:root { color-scheme: light; --ink: #1d2330; --muted: #5a6272; --rule: #d8dce3; --band: #f4f6f9; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
       color: var(--ink); background: #fff; }
main { max-width: 72rem; margin: 0 auto; padding: 1.5rem 1.25rem 4rem; }
h1 { font-size: 1.75rem; line-height: 1.25; margin: 0.5rem 0 0.75rem; }
h2 { font-size: 1.35rem; margin: 2.5rem 0 0.75rem; padding-top: 0.75rem;
     border-top: 2px solid var(--rule); }
h3 { font-size: 1.1rem; margin: 1.75rem 0 0.5rem; }
p, li { max-width: 52rem; overflow-wrap: anywhere; }
.lead { color: var(--muted); }
nav ol { display: flex; flex-wrap: wrap; gap: 0.25rem 1.25rem; padding: 0; margin: 0;
         list-style: none; counter-reset: s; }
nav li { counter-increment: s; }
nav li::before { content: counter(s) ". "; color: var(--muted); }
a { color: #0b5cad; }
code { font: 0.9em ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
       background: var(--band); padding: 0.05em 0.3em; border-radius: 3px; }
.table-wrap { overflow-x: auto; margin: 0.75rem 0 1.25rem; }
table { border-collapse: collapse; font-size: 0.9rem; font-variant-numeric: tabular-nums; }
caption { text-align: left; font-weight: 600; padding: 0 0 0.4rem; }
th, td { padding: 0.3rem 0.6rem; border-bottom: 1px solid var(--rule); vertical-align: top;
         text-align: left; }
th { background: var(--band); font-weight: 600; }
td.num { text-align: right; white-space: nowrap; }
th.num { text-align: right; }
td:first-child { min-width: 7rem; }
td code { white-space: nowrap; }
tbody tr:hover { background: #fafbfc; }
figure { margin: 1rem 0 1.5rem; max-width: 56rem; overflow-x: auto; }
figure svg { width: 100%; min-width: 40rem; height: auto; display: block; }
figcaption { color: var(--muted); font-size: 0.9rem; margin-top: 0.25rem; }
figcaption strong { color: var(--ink); }
@media (max-width: 40rem) { body { font-size: 15px; } h1 { font-size: 1.35rem; } }
@media print { h2 { break-before: auto; } figure, table { break-inside: avoid; } }
)";

// Escaped text with its `code` spans as <code> (an unpaired backtick stays as it is).
std::string inline_text(std::string_view s) {
  std::string out;
  std::size_t i = 0;
  while (i < s.size()) {
    const std::size_t open = s.find('`', i);
    const std::size_t close = open == std::string_view::npos ? open : s.find('`', open + 1);
    if (close == std::string_view::npos) {
      out += html_escape(s.substr(i));
      break;
    }
    out += html_escape(s.substr(i, open - i));
    out += "<code>" + html_escape(s.substr(open + 1, close - open - 1)) + "</code>";
    i = close + 1;
  }
  return out;
}

void write_table(std::string& out, const DocTable& t) {
  const auto cls = [&](std::size_t c) {
    return c < t.numeric.size() && t.numeric[c] ? " class=\"num\"" : "";
  };
  out += "<div class=\"table-wrap\"><table>\n";
  if (!t.caption.empty()) out += "<caption>" + inline_text(t.caption) + "</caption>\n";
  out += "<thead><tr>";
  for (std::size_t c = 0; c < t.headers.size(); ++c)
    out += fmt::format("<th scope=\"col\"{}>{}</th>", cls(c), inline_text(t.headers[c]));
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& row : t.rows) {
    out += "<tr>";
    for (std::size_t c = 0; c < row.size(); ++c)
      out += fmt::format("<td{}>{}</td>", cls(c), inline_text(row[c]));
    out += "</tr>\n";
  }
  out += "</tbody></table></div>\n";
}

void write_block(std::string& out, const DocBlock& b) {
  switch (b.kind) {
    case DocBlock::Kind::kHeading:
      out += "<h3>" + inline_text(b.text) + "</h3>\n";
      break;
    case DocBlock::Kind::kParagraph:
      out += "<p>" + inline_text(b.text) + "</p>\n";
      break;
    case DocBlock::Kind::kList:
      if (b.items.empty()) break;
      out += "<ul>\n";
      for (const auto& item : b.items)
        out += "<li>" + inline_text(item) + "</li>\n";
      out += "</ul>\n";
      break;
    case DocBlock::Kind::kTable:
      write_table(out, b.table);
      break;
    case DocBlock::Kind::kChart:
      out += "<figure>\n" + b.svg;
      out += "<figcaption><strong>" + inline_text(b.text) + ".</strong> ";
      out += (b.items.empty() ? "" : inline_text(b.items.front())) + "</figcaption>\n</figure>\n";
      break;
  }
}

}  // namespace

std::string report_html(const ReportDocument& doc) {
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"{}\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      // Nothing may be fetched: the file is the whole report.
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'\">\n"
      "<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n<main>\n<header>\n<h1>{}</h1>\n"
      "<p class=\"lead\">{}</p>\n<nav><ol>\n",
      report_lang_name(doc.lang), html_escape(doc.title), kStyle, inline_text(doc.title),
      inline_text(doc.lead));
  for (const auto& s : doc.sections)
    out += fmt::format("<li><a href=\"#{}\">{}</a></li>\n", s.id, inline_text(s.title));
  out += "</ol></nav>\n</header>\n";
  for (const auto& s : doc.sections) {
    out += fmt::format("<section id=\"{}\">\n<h2>{}</h2>\n", s.id, inline_text(s.title));
    for (const auto& b : s.blocks)
      write_block(out, b);
    out += "</section>\n";
  }
  out += "</main>\n</body>\n</html>\n";
  return out;
}

}  // namespace ftplan
