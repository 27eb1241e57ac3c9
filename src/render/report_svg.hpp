// Inline SVG charts for the HTML report: stacked bars with a limit line, a log-log roofline with
// points, and line charts. Each chart is described by plain data (labels already in the report's
// language) and drawn as a self-contained <svg> with <title> and <desc>, text labels and a
// viewBox, so it scales to the page width and reads without colour alone.
#pragma once

#include <string>
#include <vector>

#include "render/localized_number.hpp"

namespace ftplan {

struct ChartText {
  std::string id;  // unique in the document: ids of <title> and <desc> derive from it
  std::string title;
  std::string description;
};

// ---- stacked horizontal bars with a limit per bar (memory per card against capacity) -----------

struct BarSegment {
  double value = 0;
  int style = 0;  // index into the legend
};
struct BarRow {
  std::string group;        // printed once above the first row of each group (the run)
  std::string label;        // the bar's own label (the card)
  std::string value_label;  // printed at the right end of the label line ("25.9 of 150.8 GB")
  std::vector<BarSegment> segments;
  double limit = 0;  // drawn as a dark line across the bar (0: none)
};
struct StackedBarChart {
  ChartText text;
  std::string axis_label;           // "GB"
  std::vector<std::string> legend;  // one name per segment style
  std::string limit_legend;         // what the limit line is
  std::vector<BarRow> rows;
};
std::string stacked_bar_svg(const StackedBarChart& chart, const NumberStyle& numbers);

// ---- log-log roofline --------------------------------------------------------------------------

struct Roof {
  std::string label;  // legend text ("H200 NVL: 835.5 TFLOPS, 4,800 GB/s, ops:byte 174")
  double peak = 0;    // y units (TFLOPS)
  double slope = 0;   // y units per x unit (bandwidth in TB/s for TFLOPS over FLOP/B)
  int style = 0;      // colour and marker index
};
struct RooflinePoint {
  double x = 0;
  double y = 0;
  int style = 0;
};
struct RooflineMarker {  // a vertical guide at an intensity, with its label
  double x = 0;
  std::string label;
};
struct RooflineChart {
  ChartText text;
  std::string x_label;
  std::string y_label;
  std::string points_legend;  // what the points are
  std::vector<Roof> roofs;
  std::vector<RooflinePoint> points;
  std::vector<RooflineMarker> markers;
};
std::string roofline_svg(const RooflineChart& chart, const NumberStyle& numbers);

// ---- line chart over card counts ---------------------------------------------------------------

struct LineSeries {
  std::string label;
  int style = 0;
  bool dashed = false;
  std::vector<std::pair<double, double>> points;  // (x, y); x on a log2 axis
};
struct LineChart {
  ChartText text;
  std::string x_label;
  std::string y_label;
  std::vector<double> x_ticks;  // the counts
  std::vector<LineSeries> series;
};
std::string line_chart_svg(const LineChart& chart, const NumberStyle& numbers);

}  // namespace ftplan
