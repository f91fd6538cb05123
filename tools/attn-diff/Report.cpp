//===- Report.cpp - attn-diff's HTML report -------------------------------===//

#include "tools/attn-diff/Report.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace attn::diff {

namespace {

/// Failing requests that get a position chart; the rest are counted.
constexpr size_t kMaxCharts = 32;

std::string escapeHtml(const std::string &text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

/// A number for SVG coordinates and labels.
std::string num(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", v);
  return text;
}

/// The cell colour of a worst ratio: greens up to 1 (darker nearer to
/// failing), reds past it (darker further, log scale, 1000x the tolerance
/// and beyond darkest). Never blue: blue is the heat map's frame.
std::string ratioColour(double ratio) {
  auto lerp = [](const int from[3], const int to[3], double t) {
    t = std::clamp(t, 0.0, 1.0);
    char text[32];
    std::snprintf(text, sizeof text, "rgb(%d,%d,%d)",
                  int(std::lround(from[0] + (to[0] - from[0]) * t)),
                  int(std::lround(from[1] + (to[1] - from[1]) * t)),
                  int(std::lround(from[2] + (to[2] - from[2]) * t)));
    return std::string(text);
  };
  static const int passLight[3] = {225, 242, 226}, passDark[3] = {56, 142, 60};
  static const int failLight[3] = {248, 150, 130}, failDark[3] = {150, 0, 0};
  if (ratio <= 1.0)
    return lerp(passLight, passDark, ratio);
  // NaN (a NaN on one side) fails darkest, as infinity.
  double t = std::isnan(ratio) ? 1.0 : std::log10(ratio) / 3.0;
  return lerp(failLight, failDark, t);
}

/// One cell's size in pixels for `count` cells along `budget` pixels.
int cellSize(int64_t count, int budget) {
  return static_cast<int>(
      std::clamp<int64_t>(budget / std::max<int64_t>(count, 1), 4, 28));
}

/// Every `step`-th index gets a label, so that labels do not overlap.
int64_t labelStep(int cell) { return cell >= 20 ? 1 : (20 + cell - 1) / cell; }

/// The request x head heat map as inline SVG: the cells inside a blue
/// frame, head numbers above, request numbers to the left.
std::string heatMapSvg(const RequestView &view) {
  const int cw = cellSize(view.numHeads, 720);
  const int ch = cellSize(view.numRequests, 480);
  const int left = 70, top = 40;
  const int64_t cellsW = view.numHeads * cw, cellsH = view.numRequests * ch;
  std::string svg = llvm::formatv(
      "<svg class=\"heatmap\" xmlns=\"http://www.w3.org/2000/svg\" "
      "width=\"{0}\" height=\"{1}\" shape-rendering=\"crispEdges\">\n"
      "<text x=\"{2}\" y=\"12\" class=\"axis\">head</text>\n"
      "<text x=\"2\" y=\"{3}\" class=\"axis\">request</text>\n"
      // The frame: two pixels of pure blue around the cells.
      "<rect x=\"{4}\" y=\"{5}\" width=\"{6}\" height=\"{7}\" "
      "fill=\"#0000ff\"/>\n",
      left + cellsW + 20, top + cellsH + 20, left, top - 4, left - 2, top - 2,
      cellsW + 4, cellsH + 4);
  for (int64_t h = 0; h < view.numHeads; h += labelStep(cw))
    svg += llvm::formatv("<text x=\"{0}\" y=\"{1}\" class=\"tick\" "
                         "text-anchor=\"middle\">{2}</text>\n",
                         left + h * cw + cw / 2, top - 6, h);
  for (int64_t r = 0; r < view.numRequests; r += labelStep(ch))
    svg += llvm::formatv("<text x=\"{0}\" y=\"{1}\" class=\"tick\" "
                         "text-anchor=\"end\">{2}</text>\n",
                         left - 6, top + r * ch + ch / 2 + 4, r);
  for (int64_t r = 0; r < view.numRequests; ++r)
    for (int64_t h = 0; h < view.numHeads; ++h) {
      double ratio = view.requestHead[r * view.numHeads + h];
      svg += llvm::formatv(
          "<rect x=\"{0}\" y=\"{1}\" width=\"{2}\" height=\"{3}\" "
          "fill=\"{4}\"><title>request {5}, head {6}: worst error {7} x its "
          "tolerance</title></rect>\n",
          left + h * cw, top + r * ch, cw, ch, ratioColour(ratio), r, h,
          num(ratio));
    }
  return svg + "</svg>\n";
}

/// One failing request's worst ratio per position as a small line chart:
/// log scale from 1e-3 to 1e3 of the tolerance, a dashed line at 1.
std::string positionChartSvg(int64_t request,
                             const std::vector<double> &worst) {
  const int width = 360, height = 110, left = 40, right = 10, top = 18,
            bottom = 22;
  const int plotW = width - left - right, plotH = height - top - bottom;
  auto y = [&](double ratio) {
    double l = std::isnan(ratio) ? 3.0
               : ratio <= 0      ? -3.0
                                 : std::clamp(std::log10(ratio), -3.0, 3.0);
    return top + plotH * (3.0 - l) / 6.0;
  };
  auto x = [&](size_t i) {
    return worst.size() < 2
               ? left + plotW / 2.0
               : left + plotW * double(i) / double(worst.size() - 1);
  };
  auto fails = [](double ratio) { return std::isnan(ratio) || ratio > 1.0; };
  std::string svg = llvm::formatv(
      "<svg class=\"positions\" xmlns=\"http://www.w3.org/2000/svg\" "
      "width=\"{0}\" height=\"{1}\">\n"
      "<text x=\"{2}\" y=\"12\" class=\"axis\">request {3}: worst error / "
      "tolerance by position</text>\n"
      "<rect x=\"{2}\" y=\"{4}\" width=\"{5}\" height=\"{6}\" "
      "fill=\"#fafafa\" stroke=\"#999\"/>\n"
      "<line x1=\"{2}\" x2=\"{7}\" y1=\"{8}\" y2=\"{8}\" stroke=\"#555\" "
      "stroke-dasharray=\"4 3\"/>\n",
      width, height, left, request, top, plotW, plotH, left + plotW,
      num(y(1.0)));
  for (auto [tick, label] : {std::pair<double, const char *>{1e-3, "1e-3"},
                             {1.0, "1"},
                             {1e3, "1e3"}})
    svg += llvm::formatv("<text x=\"{0}\" y=\"{1}\" class=\"tick\" "
                         "text-anchor=\"end\">{2}</text>\n",
                         left - 4, num(y(tick) + 4), label);
  std::string points;
  for (size_t i = 0; i < worst.size(); ++i)
    points += num(x(i)) + "," + num(y(worst[i])) + " ";
  svg += "<polyline fill=\"none\" stroke=\"#b00020\" stroke-width=\"1.5\" "
         "points=\"" +
         points + "\"/>\n";
  // Markers while they do not crowd the line.
  if (worst.size() <= 64)
    for (size_t i = 0; i < worst.size(); ++i)
      svg += llvm::formatv(
          "<circle cx=\"{0}\" cy=\"{1}\" r=\"2\" fill=\"{2}\"/>\n", num(x(i)),
          num(y(worst[i])), fails(worst[i]) ? "#b00020" : "#388e3c");
  svg += llvm::formatv(
      "<text x=\"{0}\" y=\"{1}\" class=\"tick\">0</text>\n"
      "<text x=\"{2}\" y=\"{1}\" class=\"tick\" text-anchor=\"end\">"
      "position {3}</text>\n",
      left, height - 6, left + plotW, worst.empty() ? 0 : worst.size() - 1);
  return svg + "</svg>\n";
}

/// A result: its title and verdict, its lines, its heat map and charts.
std::string resultSection(const ReportResult &result) {
  std::string html = llvm::formatv(
      "<section class=\"result\">\n<h3>{0} <span class=\"{1}\">{2}</span>"
      "</h3>\n<pre>",
      escapeHtml(result.title), result.passed ? "pass" : "fail",
      result.passed ? "PASS" : "FAIL");
  for (const std::string &line : result.lines)
    html += escapeHtml(line) + "\n";
  html += "</pre>\n";
  if (!result.hasRequests)
    return html + "<p class=\"note\">No heat map: this result's rows are "
                  "not tokens of requests, or it was not compared.</p>\n"
                  "</section>\n";
  html += "<p class=\"note\">Worst error relative to the tolerance, |device - "
          "reference| / (atol + rtol &#183; |reference|), per request and "
          "head: green within the tolerance (darker: nearer to it), red "
          "beyond (darker: further, log scale, darkest at 1000x).</p>\n";
  html += heatMapSvg(result.view);
  const auto &failing = result.view.failingPositions;
  if (failing.empty())
    return html + "</section>\n";
  html += "<h4>Failing requests, worst error per position (the request's "
          "query tokens in order)</h4>\n<div class=\"charts\">\n";
  for (size_t i = 0; i < std::min(failing.size(), kMaxCharts); ++i)
    html += positionChartSvg(failing[i].first, failing[i].second);
  html += "</div>\n";
  if (failing.size() > kMaxCharts)
    html += llvm::formatv("<p class=\"note\">and {0} more failing "
                          "requests</p>\n",
                          failing.size() - kMaxCharts);
  return html + "</section>\n";
}

const char *kStyle =
    R"(body { font: 14px sans-serif; margin: 16px; color: #222; }
h1 { font-size: 20px; overflow-wrap: anywhere; }
h2 { font-size: 15px; overflow-wrap: anywhere; }
pre { white-space: pre-wrap; font: 12px monospace; background: #f4f4f4;
      padding: 6px; }
.pass { color: #2e7d32; } .fail { color: #b00020; }
.note { color: #555; font-size: 12px; }
.axis { font: 12px sans-serif; fill: #333; }
.tick { font: 10px sans-serif; fill: #555; }
.charts svg { margin: 4px 12px 4px 0; }
)";

} // namespace

RequestView viewByRequest(const TensorDiff &diff,
                          const std::vector<int64_t> &requestOfRow) {
  RequestView view;
  const int64_t rows = static_cast<int64_t>(requestOfRow.size());
  if (rows == 0 || diff.rowHeadWorst.size() % rows != 0)
    return view;
  view.numHeads = static_cast<int64_t>(diff.rowHeadWorst.size()) / rows;
  for (int64_t r : requestOfRow)
    view.numRequests = std::max(view.numRequests, r + 1);
  view.requestHead.assign(view.numRequests * view.numHeads, 0.0);
  std::map<int64_t, std::vector<double>> positions;
  auto worse = [](double a, double b) {
    return std::isnan(b) || b > a ? b : a;
  };
  for (int64_t row = 0; row < rows; ++row) {
    int64_t r = requestOfRow[row];
    if (r < 0)
      continue;
    double rowWorst = 0.0;
    for (int64_t h = 0; h < view.numHeads; ++h) {
      double ratio = diff.rowHeadWorst[row * view.numHeads + h];
      double &cell = view.requestHead[r * view.numHeads + h];
      cell = worse(cell, ratio);
      rowWorst = worse(rowWorst, ratio);
    }
    positions[r].push_back(rowWorst);
  }
  for (auto &[r, worst] : positions)
    if (std::any_of(worst.begin(), worst.end(),
                    [](double v) { return std::isnan(v) || v > 1.0; }))
      view.failingPositions.emplace_back(r, std::move(worst));
  return view;
}

std::string renderReport(const Report &report) {
  std::string html = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n"
                     "<title>attn-diff: " +
                     escapeHtml(report.subject) + "</title>\n<style>\n" +
                     kStyle + "</style></head>\n<body>\n";
  html += "<h1>attn-diff: " + escapeHtml(report.subject) + " <span class=\"" +
          (report.verdict == "PASS" ? "pass" : "fail") + "\">" +
          escapeHtml(report.verdict) + "</span></h1>\n";
  for (const ReportRun &run : report.runs) {
    html += "<h2>" + escapeHtml(run.header.empty() ? "" : run.header.front()) +
            "</h2>\n";
    if (run.header.size() > 1) {
      html += "<pre>";
      for (size_t i = 1; i < run.header.size(); ++i)
        html += escapeHtml(run.header[i]) + "\n";
      html += "</pre>\n";
    }
    for (const ReportResult &result : run.results)
      html += resultSection(result);
  }
  return html + "</body></html>\n";
}

llvm::Error writeReport(const std::string &path, const Report &report) {
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return llvm::createStringError("--report: cannot write " + path + ": " +
                                   ec.message());
  out << renderReport(report);
  out.close();
  if (out.has_error())
    return llvm::createStringError("--report: cannot write " + path + ": " +
                                   out.error().message());
  return llvm::Error::success();
}

} // namespace attn::diff
