#include "render/report_svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "render/html_escape.hpp"

namespace ftplan {

namespace {

// Colours that stay apart for the common colour-vision deficiencies (Okabe–Ito), and markers and
// dash patterns that carry the same distinction without colour.
constexpr const char* kPalette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                    "#E69F00", "#56B4E9", "#000000"};
constexpr const char* kSegmentPalette[] = {"#0072B2", "#E69F00", "#999999", "#009E73"};
// The viewBox width: the charts scale to the page from here, but never below it (the report's
// style sheet scrolls the figure sideways instead), so labels stay kFont pixels on a phone.
constexpr double kWidth = 640;
constexpr double kFont = 11;  // label size in viewBox units
constexpr const char* kInk = "#222";
constexpr const char* kGrid = "#ddd";

const char* colour(int style) {
  return kPalette[static_cast<std::size_t>(style) % std::size(kPalette)];
}

std::string num(double v) {
  return fmt::format("{:.1f}", v);
}

std::string text(double x, double y, const std::string& s, const char* anchor = "start",
                 const char* extra = "") {
  return fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"{}\" fill=\"{}\"{}>{}</text>\n", num(x),
                     num(y), anchor, kInk, extra, html_escape(s));
}

std::string line(double x1, double y1, double x2, double y2, const char* stroke, double width,
                 const char* extra = "") {
  return fmt::format(
      "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"{}\"{}/>\n",
      num(x1), num(y1), num(x2), num(y2), stroke, num(width), extra);
}

// A step of 1, 2 or 5 × 10^k that gives about `target` intervals up to `max`.
double nice_step(double max, int target) {
  const double raw = max / target;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * magnitude) return m * magnitude;
  return 10 * magnitude;
}

int decimals_for(double step) {
  return step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step)));
}

// `hollow`: an open marker of the same shape (a variant of the same card, e.g. held to PCIe).
std::string marker(double x, double y, int style, double r = 3.2, bool hollow = false) {
  const char* c = colour(style);
  switch (style % 4) {
    case 0:
      return fmt::format(
          "<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{}\" fill-opacity=\"{}\" stroke=\"{}\"/>",
          num(x), num(y), num(r), hollow ? "#fff" : c, hollow ? "1" : "0.75", c);
    case 1:
      return fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"{}\" "
          "stroke-width=\"1.2\"/>",
          num(x - r), num(y - r), num(2 * r), num(2 * r), c);
    case 2:
      return fmt::format(
          "<path d=\"M{} {} L{} {} L{} {} Z\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.2\"/>",
          num(x), num(y - r), num(x + r), num(y + r), num(x - r), num(y + r), c);
    default:
      return fmt::format(
          "<path d=\"M{} {} L{} {} L{} {} L{} {} Z\" fill=\"none\" stroke=\"{}\" "
          "stroke-width=\"1.2\"/>",
          num(x), num(y - r), num(x + r), num(y), num(x), num(y + r), num(x - r), num(y), c);
  }
}

// ---- the frame every chart shares ---------------------------------------------------------------

// The whole <svg>: viewBox `height` units tall, <title> and <desc> from `t`, then `body`.
std::string chart_svg(const ChartText& t, double height, const std::string& body) {
  return fmt::format(
             "<svg class=\"chart\" viewBox=\"0 0 {} {}\" role=\"img\" "
             "aria-labelledby=\"{}-title {}-desc\" font-family=\"system-ui, sans-serif\" "
             "font-size=\"{}\">\n<title id=\"{}-title\">{}</title>\n"
             "<desc id=\"{}-desc\">{}</desc>\n",
             num(kWidth), num(height), t.id, t.id, num(kFont), t.id, html_escape(t.title), t.id,
             html_escape(t.description)) +
         body + "</svg>\n";
}

// The rectangle the data is plotted in (margins to the viewBox's sides, top and height) and what
// is drawn around it: grid lines across it, tick labels and axis titles outside it, its border.
struct PlotArea {
  double left = 0;
  double right = 0;
  double top = 0;
  double height = 0;

  double width() const { return kWidth - left - right; }
  double bottom() const { return top + height; }
  // Where the legend starts, below the tick labels and the x-axis title.
  double legend_top() const { return bottom() + 46; }

  std::string vertical_grid(double x) const { return line(x, top, x, bottom(), kGrid, 0.6); }
  std::string horizontal_grid(double y) const {
    return line(left, y, kWidth - right, y, kGrid, 0.6);
  }
  std::string x_tick(double x, const std::string& label, const char* anchor = "middle") const {
    return text(x, bottom() + 12, label, anchor);
  }
  std::string y_tick(double y, const std::string& label) const {
    return text(left - 4, y + 3.5, label, "end");
  }
  // Under the tick labels, centred on `centre` (by default the plot's middle).
  std::string x_title(const std::string& label, double centre) const {
    return text(centre, bottom() + 26, label, "middle");
  }
  std::string x_title(const std::string& label) const { return x_title(label, left + width() / 2); }
  // Turned upright along the left edge, centred on the plot's height.
  std::string y_title(const std::string& label) const {
    return fmt::format(
        "<text x=\"12\" y=\"{}\" text-anchor=\"middle\" fill=\"{}\" "
        "transform=\"rotate(-90 12 {})\">{}</text>\n",
        num(top + height / 2), kInk, num(top + height / 2), html_escape(label));
  }
  std::string border() const {
    return fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"{}\" "
        "stroke-width=\"0.8\"/>\n",
        num(left), num(top), num(width()), num(height), kInk);
  }
};

// Legend rows under a chart: a swatch (filled box, line or marker) and its text, one per row.
struct LegendEntry {
  std::string swatch;  // SVG drawn at (0, 0)–(16, 8)
  std::string label;
};
// Appends the rows from `top` down; returns the y below the last one.
double legend(std::string& out, const std::vector<LegendEntry>& entries, double top) {
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const double y = top + 16.0 * static_cast<double>(i);
    out += fmt::format("<g transform=\"translate(8 {})\">{}</g>\n", num(y - 8), entries[i].swatch);
    out += text(36, y, entries[i].label);
  }
  return top + 16.0 * static_cast<double>(entries.size());
}

// The swatch of a series: its line (with `dash`, an attribute or "") through its marker.
std::string series_swatch(int style, const char* dash, bool hollow = false) {
  return line(0, 4, 22, 4, colour(style), 2, dash) + marker(11, 4, style, 2.8, hollow);
}

}  // namespace

// ---- stacked bars ------------------------------------------------------------------------------

std::string stacked_bar_svg(const StackedBarChart& chart, const NumberStyle& numbers) {
  constexpr double kLeft = 8, kRight = 14, kTop = 10, kBar = 12, kLabel = 14, kGap = 8, kGroup = 17;
  double max = 0;
  for (const auto& r : chart.rows) {
    double sum = 0;
    for (const auto& s : r.segments)
      sum += s.value;
    max = std::max({max, sum, r.limit});
  }
  const double step = nice_step(max > 0 ? max : 1, 5);
  const double top_value = std::ceil(max / step) * step;
  const double plot_w = kWidth - kLeft - kRight;
  auto xpos = [&](double v) { return kLeft + plot_w * v / top_value; };

  std::string body;
  double y = 6;
  std::string previous_group;
  for (const auto& r : chart.rows) {
    if (r.group != previous_group) {
      y += kGroup;
      body += text(kLeft, y - 4, r.group, "start", " font-weight=\"bold\"");
      previous_group = r.group;
    }
    y += kLabel;
    body += text(kLeft, y - 3, r.label);
    body += text(kWidth - kRight, y - 3, r.value_label, "end");
    double x = 0;
    for (const auto& s : r.segments) {
      if (s.value <= 0) continue;
      body += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>\n", num(xpos(x)),
          num(y), num(xpos(x + s.value) - xpos(x)), num(kBar),
          kSegmentPalette[static_cast<std::size_t>(s.style) % std::size(kSegmentPalette)]);
      x += s.value;
    }
    if (r.limit > 0) body += line(xpos(r.limit), y, xpos(r.limit), y + kBar + 3, kInk, 2);
    y += kBar + kGap;
  }
  // Axis with ticks under the bars, grid lines behind them; the plot ends at the axis.
  const PlotArea plot{.left = kLeft, .right = kRight, .top = kTop, .height = y + 2 - kTop};
  std::string grid;
  for (double v = 0; v <= top_value + step / 2; v += step) {
    grid += plot.vertical_grid(xpos(v));
    body += plot.x_tick(xpos(v), localized_number(v, decimals_for(step), numbers),
                        v == 0 ? "start" : (v + step / 2 > top_value ? "end" : "middle"));
  }
  body += plot.x_title(chart.axis_label, kWidth / 2);
  std::vector<LegendEntry> entries;
  for (std::size_t i = 0; i < chart.legend.size(); ++i)
    entries.push_back({fmt::format("<rect width=\"22\" height=\"9\" fill=\"{}\"/>",
                                   kSegmentPalette[i % std::size(kSegmentPalette)]),
                       chart.legend[i]});
  entries.push_back({line(11, -1, 11, 10, kInk, 2), chart.limit_legend});
  const double height = legend(body, entries, plot.legend_top());
  return chart_svg(chart.text, height, grid + body);
}

// ---- roofline ----------------------------------------------------------------------------------

std::string roofline_svg(const RooflineChart& chart, const NumberStyle& numbers) {
  const PlotArea plot{.left = 48, .right = 10, .top = 10, .height = 320};
  double x_lo = 1e300, x_hi = 0, y_lo = 1e300, y_hi = 0;
  for (const auto& p : chart.points) {
    x_lo = std::min(x_lo, p.x);
    x_hi = std::max(x_hi, p.x);
    y_lo = std::min(y_lo, p.y);
    y_hi = std::max(y_hi, p.y);
  }
  for (const auto& m : chart.markers) {
    x_lo = std::min(x_lo, m.x);
    x_hi = std::max(x_hi, m.x);
  }
  for (const auto& r : chart.roofs) {
    y_hi = std::max(y_hi, r.peak);
    x_hi = std::max(x_hi, 2 * r.peak / r.slope);
  }
  if (x_hi <= 0) x_lo = 1, x_hi = 10;
  if (y_hi <= 0) y_lo = 1, y_hi = 10;
  const double lx0 = std::floor(std::log10(x_lo)), lx1 = std::ceil(std::log10(x_hi));
  const double ly0 = std::floor(std::log10(y_lo)), ly1 = std::ceil(std::log10(y_hi * 1.05));
  const double plot_w = plot.width();
  auto xpos = [&](double x) { return plot.left + plot_w * (std::log10(x) - lx0) / (lx1 - lx0); };
  auto ypos = [&](double y) {
    return plot.top + plot.height * (ly1 - std::log10(y)) / (ly1 - ly0);
  };
  const double bottom = plot.bottom();

  std::string out;
  // Decades: grid and labels.
  for (double e = lx0; e <= lx1; e += 1) {
    const double x = xpos(std::pow(10.0, e));
    out += plot.vertical_grid(x);
    // The last label ends at the frame, so that it stays inside the drawing.
    out += plot.x_tick(
        x, localized_number(std::pow(10.0, e), e < 0 ? -static_cast<int>(e) : 0, numbers),
        e + 0.5 > lx1 ? "end" : "middle");
  }
  for (double e = ly0; e <= ly1; e += 1) {
    const double y = ypos(std::pow(10.0, e));
    out += plot.horizontal_grid(y);
    out += plot.y_tick(
        y, localized_number(std::pow(10.0, e), e < 0 ? -static_cast<int>(e) : 0, numbers));
  }
  out += plot.border();
  out += plot.x_title(chart.x_label);
  out += plot.y_title(chart.y_label);
  // Guides at the intensities the text discusses.
  for (const auto& m : chart.markers) {
    const double x = xpos(m.x);
    out += line(x, plot.top, x, bottom, "#555", 0.8, " stroke-dasharray=\"3 3\"");
    // At the foot of the plot: the roofs run along its top.
    out += text(x + 3, bottom - 5, m.label, x > plot.left + plot_w * 0.6 ? "end" : "start",
                x > plot.left + plot_w * 0.6 ? " dx=\"-6\"" : "");
  }
  // Each card's roof: the bandwidth slope up to the ridge (ops:byte), then the flat peak.
  const double x_min = std::pow(10.0, lx0), x_max = std::pow(10.0, lx1);
  const double y_min = std::pow(10.0, ly0);
  for (const auto& r : chart.roofs) {
    const double ridge = r.peak / r.slope;
    const double x_start = std::max(x_min, y_min / r.slope);
    out += fmt::format(
        "<polyline points=\"{},{} {},{} {},{}\" fill=\"none\" stroke=\"{}\" "
        "stroke-width=\"2\"{}/>\n",
        num(xpos(x_start)), num(ypos(x_start * r.slope)), num(xpos(ridge)), num(ypos(r.peak)),
        num(xpos(x_max)), num(ypos(r.peak)), colour(r.style),
        r.style % 2 ? " stroke-dasharray=\"6 3\"" : "");
  }
  // The operations, one marker shape per card; points that would land on one pixel drawn once.
  std::vector<std::tuple<int, long, long>> drawn;
  for (const auto& p : chart.points) {
    const double x = xpos(p.x), y = ypos(p.y);
    const auto key = std::make_tuple(p.style, std::lround(x), std::lround(y));
    if (std::find(drawn.begin(), drawn.end(), key) != drawn.end()) continue;
    drawn.push_back(key);
    out += marker(x, y, p.style) + "\n";
  }
  std::vector<LegendEntry> entries;
  for (const auto& r : chart.roofs)
    entries.push_back(
        {series_swatch(r.style, r.style % 2 ? " stroke-dasharray=\"6 3\"" : ""), r.label});
  double height = legend(out, entries, plot.legend_top());
  if (!chart.points_legend.empty()) {
    out += text(8, height + 2, chart.points_legend);
    height += 16;
  }
  return chart_svg(chart.text, height, out);
}

// ---- line chart --------------------------------------------------------------------------------

std::string line_chart_svg(const LineChart& chart, const NumberStyle& numbers) {
  const PlotArea plot{.left = 56, .right = 14, .top = 10, .height = 240};
  double y_max = 0, x_lo = 1e300, x_hi = 0;
  for (const auto& s : chart.series)
    for (const auto& [x, y] : s.points)
      y_max = std::max(y_max, y);
  for (double x : chart.x_ticks) {
    x_lo = std::min(x_lo, x);
    x_hi = std::max(x_hi, x);
  }
  if (x_hi <= x_lo) x_lo = 1, x_hi = 2;
  const double step = nice_step(y_max > 0 ? y_max : 1, 4);
  // At least one step: a run that fits on no count has no point, and a zero top would put every
  // grid line at NaN.
  const double top_value = std::max(step, std::ceil(y_max * 1.05 / step) * step);
  const double plot_w = plot.width();
  auto xpos = [&](double x) {
    return plot.left +
           plot_w * (std::log2(x) - std::log2(x_lo)) / (std::log2(x_hi) - std::log2(x_lo));
  };
  auto ypos = [&](double y) { return plot.top + plot.height * (1 - y / top_value); };
  std::string out;
  for (double v = 0; v <= top_value + step / 2; v += step) {
    out += plot.horizontal_grid(ypos(v));
    out += plot.y_tick(ypos(v), localized_number(v, decimals_for(step), numbers));
  }
  for (double x : chart.x_ticks) {
    out += plot.vertical_grid(xpos(x));
    out += plot.x_tick(xpos(x), localized_number(x, 0, numbers));
  }
  out += plot.border();
  out += plot.x_title(chart.x_label);
  out += plot.y_title(chart.y_label);
  // Solid series first, dashed ones (a card held to a slower link) on top with open markers, so
  // that a curve that runs along another stays visible.
  for (bool dashed : {false, true})
    for (const auto& s : chart.series) {
      if (s.dashed != dashed) continue;
      std::string points;
      for (const auto& [x, y] : s.points)
        points += fmt::format("{},{} ", num(xpos(x)), num(ypos(y)));
      if (s.points.size() > 1)
        out += fmt::format(
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{}/>\n", points,
            colour(s.style), dashed ? " stroke-dasharray=\"6 4\"" : "");
      for (const auto& [x, y] : s.points)
        out += marker(xpos(x), ypos(y), s.style, 3.2, dashed) + "\n";
    }
  std::vector<LegendEntry> entries;
  for (const auto& s : chart.series)
    entries.push_back(
        {series_swatch(s.style, s.dashed ? " stroke-dasharray=\"6 4\"" : "", s.dashed), s.label});
  const double height = legend(out, entries, plot.legend_top());
  return chart_svg(chart.text, height, out);
}

}  // namespace ftplan
