#include "eagle2/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace eagle2 {

namespace {

// Tableau 10: distinguishable for the common colour-vision deficiencies; markers differ in shape
// too so a greyscale print still separates the lines.
constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr size_t kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);

const char* color(size_t i) {
  return kPalette[i % kPaletteSize];
}

// Coordinates: one decimal is sub-pixel and keeps the files small.
std::string px(double v) {
  return format_number(v, 1);
}

int tick_decimals(const std::vector<double>& ticks) {
  if (ticks.size() < 2) return 0;
  const double step = ticks[1] - ticks[0];
  return std::clamp(static_cast<int>(-std::floor(std::log10(step) + 1e-9)), 0, 6);
}

struct Frame {
  double x0, x1, y0, y1;  // plot area: x0 left, y0 top
};

void open_svg(std::ostringstream& o, int width, int height, const std::string& title) {
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
    << "\" viewBox=\"0 0 " << width << ' ' << height
    << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  o << "<rect x=\"0\" y=\"0\" width=\"" << width << "\" height=\"" << height
    << "\" fill=\"white\"/>\n";
  o << "<text x=\"" << px(width / 2.0)
    << "\" y=\"24\" text-anchor=\"middle\" font-size=\"16\" "
       "font-weight=\"bold\">"
    << xml_escape(title) << "</text>\n";
}

// Horizontal grid lines with labels on the left, and the y axis title rotated alongside.
void y_axis(std::ostringstream& o, const Frame& f, const std::vector<double>& ticks,
            const std::string& label) {
  const double lo = ticks.front(), hi = ticks.back();
  const int dec = tick_decimals(ticks);
  for (double t : ticks) {
    const double y = f.y1 - (t - lo) / (hi - lo) * (f.y1 - f.y0);
    o << "<line x1=\"" << px(f.x0) << "\" y1=\"" << px(y) << "\" x2=\"" << px(f.x1) << "\" y2=\""
      << px(y) << "\" stroke=\"#dddddd\"/>\n";
    o << "<text x=\"" << px(f.x0 - 6) << "\" y=\"" << px(y + 4) << "\" text-anchor=\"end\">"
      << format_number(t, dec) << "</text>\n";
  }
  o << "<line x1=\"" << px(f.x0) << "\" y1=\"" << px(f.y0) << "\" x2=\"" << px(f.x0) << "\" y2=\""
    << px(f.y1) << "\" stroke=\"black\"/>\n";
  const double cy = (f.y0 + f.y1) / 2;
  o << "<text x=\"16\" y=\"" << px(cy) << "\" text-anchor=\"middle\" transform=\"rotate(-90 16 "
    << px(cy) << ")\">" << xml_escape(label) << "</text>\n";
}

void legend(std::ostringstream& o, const Frame& f, const std::vector<std::string>& names) {
  for (size_t i = 0; i < names.size(); ++i) {
    const double y = f.y0 + 4 + 18.0 * static_cast<double>(i);
    o << "<rect x=\"" << px(f.x1 + 16) << "\" y=\"" << px(y) << "\" width=\"12\" height=\"12\" "
      << "fill=\"" << color(i) << "\"/>\n";
    o << "<text x=\"" << px(f.x1 + 34) << "\" y=\"" << px(y + 10) << "\">" << xml_escape(names[i])
      << "</text>\n";
  }
}

void no_data(std::ostringstream& o, const Frame& f) {
  o << "<text x=\"" << px((f.x0 + f.x1) / 2) << "\" y=\"" << px((f.y0 + f.y1) / 2)
    << "\" text-anchor=\"middle\" fill=\"#888888\">no data</text>\n";
}

}  // namespace

std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
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
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string format_number(double value, int decimals) {
  if (!std::isfinite(value)) return "0";
  decimals = std::clamp(decimals, 0, 9);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, value);
  std::string s = buf;
  if (s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
  return s;
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
  if (lo > hi) std::swap(lo, hi);
  if (hi - lo < 1e-12) hi = lo + 1;
  const double raw = (hi - lo) / std::max(target, 1);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / mag;
  const double step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * mag;
  // The tolerance keeps a value that is already a multiple of the step from growing a tick.
  const double start = std::floor(lo / step + 1e-9) * step;
  const double end = std::ceil(hi / step - 1e-9) * step;
  std::vector<double> ticks;
  const int n = static_cast<int>(std::llround((end - start) / step));
  for (int i = 0; i <= n; ++i) ticks.push_back(start + step * i);
  return ticks;
}

std::string render_bar_chart(const BarChart& c) {
  std::ostringstream o;
  const double width = std::max(c.width, 200), height = std::max(c.height, 150);
  std::vector<std::string> names;
  for (const BarSeries& s : c.series) names.push_back(s.name);
  const bool with_legend = !names.empty() && !(names.size() == 1 && names[0].empty());
  const Frame f{64, width - (with_legend ? 150 : 20), 44, height - 80};
  open_svg(o, static_cast<int>(width), static_cast<int>(height), c.title);

  double lo = 0, hi = 0;
  bool any = false;
  for (const BarSeries& s : c.series)
    for (size_t i = 0; i < s.values.size() && i < c.categories.size(); ++i)
      if (std::isfinite(s.values[i])) {
        lo = std::min(lo, s.values[i]);
        hi = std::max(hi, s.values[i]);
        any = true;
      }
  const auto ticks = nice_ticks(lo, hi);
  y_axis(o, f, ticks, c.y_label);
  const double ylo = ticks.front(), yhi = ticks.back();
  auto ymap = [&](double v) { return f.y1 - (v - ylo) / (yhi - ylo) * (f.y1 - f.y0); };

  const size_t ncat = std::max<size_t>(c.categories.size(), 1);
  const size_t nser = std::max<size_t>(c.series.size(), 1);
  const double group = (f.x1 - f.x0) / static_cast<double>(ncat);
  const double bar = group * 0.8 / static_cast<double>(nser);
  // Long drafter labels collide when groups are narrow; slanting them keeps every one readable.
  const bool slant = group < 90;
  for (size_t ci = 0; ci < c.categories.size(); ++ci) {
    const double gx = f.x0 + group * static_cast<double>(ci);
    for (size_t si = 0; si < c.series.size(); ++si) {
      const auto& vals = c.series[si].values;
      if (ci >= vals.size() || !std::isfinite(vals[ci])) continue;
      const double v = vals[ci];
      const double x = gx + group * 0.1 + bar * static_cast<double>(si);
      const double top = ymap(std::max(v, 0.0)), bottom = ymap(std::min(v, 0.0));
      o << "<rect x=\"" << px(x) << "\" y=\"" << px(top) << "\" width=\"" << px(bar)
        << "\" height=\"" << px(bottom - top) << "\" fill=\"" << color(si) << "\"><title>"
        << xml_escape(c.categories[ci]);
      if (!c.series[si].name.empty()) o << ' ' << xml_escape(c.series[si].name);
      o << ": " << format_number(v, c.decimals) << "</title></rect>\n";
      const double ly = v >= 0 ? top - 4 : bottom + 12;
      o << "<text x=\"" << px(x + bar / 2) << "\" y=\"" << px(ly)
        << "\" text-anchor=\"middle\" font-size=\"10\">" << format_number(v, c.decimals)
        << "</text>\n";
    }
    const double cx = gx + group / 2, cy = f.y1 + 16;
    if (slant)
      o << "<text x=\"" << px(cx) << "\" y=\"" << px(cy) << "\" text-anchor=\"end\" transform=\""
        << "rotate(-30 " << px(cx) << ' ' << px(cy) << ")\">" << xml_escape(c.categories[ci])
        << "</text>\n";
    else
      o << "<text x=\"" << px(cx) << "\" y=\"" << px(cy) << "\" text-anchor=\"middle\">"
        << xml_escape(c.categories[ci]) << "</text>\n";
  }
  const double base = ymap(std::clamp(0.0, ylo, yhi));
  o << "<line x1=\"" << px(f.x0) << "\" y1=\"" << px(base) << "\" x2=\"" << px(f.x1) << "\" y2=\""
    << px(base) << "\" stroke=\"black\"/>\n";
  if (!any) no_data(o, f);
  if (with_legend) legend(o, f, names);
  o << "</svg>\n";
  return o.str();
}

std::string render_line_chart(const LineChart& c) {
  std::ostringstream o;
  const double width = std::max(c.width, 200), height = std::max(c.height, 150);
  std::vector<std::string> names;
  for (const LineSeries& s : c.series) names.push_back(s.name);
  const Frame f{64, width - (names.empty() ? 20 : 150), 44, height - 64};
  open_svg(o, static_cast<int>(width), static_cast<int>(height), c.title);

  std::vector<std::vector<std::pair<double, double>>> sorted;
  double xlo = 0, xhi = 0, ylo = 0, yhi = 0;
  bool any = false;
  for (const LineSeries& s : c.series) {
    auto& pts = sorted.emplace_back();
    for (const auto& p : s.points)
      if (std::isfinite(p.first) && std::isfinite(p.second)) pts.push_back(p);
    std::stable_sort(pts.begin(), pts.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [x, y] : pts) {
      xlo = any ? std::min(xlo, x) : x;
      xhi = any ? std::max(xhi, x) : x;
      ylo = std::min(ylo, y);  // y starts at 0: ratios like tau and speedup read honestly from 0
      yhi = std::max(yhi, y);
      any = true;
    }
  }
  if (xhi - xlo < 1e-12) xlo -= 1, xhi += 1;
  const auto yt = nice_ticks(ylo, yhi);
  const auto xt = nice_ticks(xlo, xhi, 6);
  y_axis(o, f, yt, c.y_label);
  const double ya = yt.front(), yb = yt.back(), xa = xt.front(), xb = xt.back();
  auto ymap = [&](double v) { return f.y1 - (v - ya) / (yb - ya) * (f.y1 - f.y0); };
  auto xmap = [&](double v) { return f.x0 + (v - xa) / (xb - xa) * (f.x1 - f.x0); };

  const int xdec = tick_decimals(xt);
  for (double t : xt) {
    const double x = xmap(t);
    o << "<line x1=\"" << px(x) << "\" y1=\"" << px(f.y1) << "\" x2=\"" << px(x) << "\" y2=\""
      << px(f.y1 + 4) << "\" stroke=\"black\"/>\n";
    o << "<text x=\"" << px(x) << "\" y=\"" << px(f.y1 + 16) << "\" text-anchor=\"middle\">"
      << format_number(t, xdec) << "</text>\n";
  }
  o << "<line x1=\"" << px(f.x0) << "\" y1=\"" << px(f.y1) << "\" x2=\"" << px(f.x1) << "\" y2=\""
    << px(f.y1) << "\" stroke=\"black\"/>\n";
  o << "<text x=\"" << px((f.x0 + f.x1) / 2) << "\" y=\"" << px(f.y1 + 40)
    << "\" text-anchor=\"middle\">" << xml_escape(c.x_label) << "</text>\n";

  for (size_t si = 0; si < sorted.size(); ++si) {
    const auto& pts = sorted[si];
    const char* col = color(si);
    if (pts.size() > 1) {
      o << "<polyline fill=\"none\" stroke=\"" << col << "\" stroke-width=\"2\" points=\"";
      for (size_t i = 0; i < pts.size(); ++i)
        o << (i ? " " : "") << px(xmap(pts[i].first)) << ',' << px(ymap(pts[i].second));
      o << "\"/>\n";
    }
    for (const auto& [x, y] : pts) {
      const double mx = xmap(x), my = ymap(y);
      const std::string tip = "<title>" + xml_escape(c.series[si].name) + " at " +
                              format_number(x, c.x_decimals >= 0 ? c.x_decimals : xdec) + ": " +
                              format_number(y, c.decimals) + "</title>";
      switch (si % 3) {
        case 0:
          o << "<circle cx=\"" << px(mx) << "\" cy=\"" << px(my) << "\" r=\"4\" fill=\"" << col
            << "\">" << tip << "</circle>\n";
          break;
        case 1:
          o << "<rect x=\"" << px(mx - 4) << "\" y=\"" << px(my - 4)
            << "\" width=\"8\" height=\"8\" fill=\"" << col << "\">" << tip << "</rect>\n";
          break;
        default:
          o << "<polygon points=\"" << px(mx) << ',' << px(my - 5) << ' ' << px(mx + 5) << ','
            << px(my) << ' ' << px(mx) << ',' << px(my + 5) << ' ' << px(mx - 5) << ',' << px(my)
            << "\" fill=\"" << col << "\">" << tip << "</polygon>\n";
      }
      if (c.value_labels)
        o << "<text x=\"" << px(mx) << "\" y=\"" << px(my - 8)
          << "\" text-anchor=\"middle\" font-size=\"9\" fill=\"" << col << "\">"
          << format_number(y, c.decimals) << "</text>\n";
    }
  }
  if (!any) no_data(o, f);
  legend(o, f, names);
  o << "</svg>\n";
  return o.str();
}

}  // namespace eagle2
