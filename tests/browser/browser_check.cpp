// The HTML report in a real browser: makes a report with `prism train --report`, opens it in
// headless Chromium (Debian's chromium-headless-shell, or chromium), and checks what a reader
// would see:
//   - the page loads with no console message at error level,
//   - the browser makes no network request (its net log names no URL but the page's file://),
//   - every view's <svg> is in the rendered DOM and holds shapes,
//   - the screenshot is not blank: it has many colours, and a good share of non-white pixels.
// Exit 0: all held; 1: one failed (each failure printed); 77: no Chromium on this machine, which
// ctest reports as skipped with the reason printed here.
//
// Usage: prism_browser_check PRISM_EXECUTABLE WORK_DIR
#include <zlib.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

int failures = 0;

void fail(const std::string& what) {
  std::printf("FAIL: %s\n", what.c_str());
  ++failures;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

int run(const std::string& cmd) {
  std::printf("$ %s\n", cmd.c_str());
  std::fflush(stdout);
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
}

std::string find_browser() {
  for (const char* name : {"chromium-headless-shell", "chromium"}) {
    for (const char* dir : {"/usr/bin", "/usr/local/bin"}) {
      const fs::path p = fs::path(dir) / name;
      if (fs::exists(p)) return p.string();
    }
  }
  return "";
}

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// ---- the screenshot: a PNG, decoded just enough to count its colours -------------------------

uint32_t be32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

// Paeth's predictor (PNG filter type 4): whichever of left, up and up-left is closest to
// left + up - up-left.
int paeth(int a, int b, int c) {
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  return pa <= pb && pa <= pc ? a : (pb <= pc ? b : c);
}

struct Pixels {
  int width = 0, height = 0;
  std::vector<uint32_t> rgb;  // 0xRRGGBB, row by row
};

// 8-bit RGB or RGBA, not interlaced (what Chromium writes); anything else is an error string.
std::string decode_png(const std::string& file, Pixels& out) {
  const auto* d = reinterpret_cast<const unsigned char*>(file.data());
  if (file.size() < 8 || file.compare(1, 3, "PNG") != 0) return "not a PNG file";
  std::string idat;
  int depth = 0, colour = 0, interlace = 0;
  for (size_t at = 8; at + 12 <= file.size();) {
    const uint32_t len = be32(d + at);
    const std::string type = file.substr(at + 4, 4);
    if (at + 12 + len > file.size()) return "truncated chunk " + type;
    const unsigned char* data = d + at + 8;
    if (type == "IHDR") {
      out.width = static_cast<int>(be32(data));
      out.height = static_cast<int>(be32(data + 4));
      depth = data[8], colour = data[9], interlace = data[12];
    } else if (type == "IDAT") {
      idat.append(reinterpret_cast<const char*>(data), len);
    }
    at += 12 + len;
  }
  if (depth != 8 || (colour != 2 && colour != 6) || interlace != 0) {
    return "unexpected PNG format (bit depth " + std::to_string(depth) + ", colour type " +
           std::to_string(colour) + ")";
  }
  const int bpp = colour == 6 ? 4 : 3;
  const size_t stride = static_cast<size_t>(out.width) * bpp;
  std::vector<unsigned char> raw((stride + 1) * static_cast<size_t>(out.height));
  uLongf raw_len = raw.size();
  if (uncompress(raw.data(), &raw_len, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) !=
          Z_OK ||
      raw_len != raw.size()) {
    return "cannot inflate the image data";
  }
  // Undo each row's filter (PNG spec, section 9): every byte is predicted from the byte bpp to
  // its left (a), the one above (b) and the one above-left (c).
  std::vector<unsigned char> prev(stride, 0), row(stride);
  for (int y = 0; y < out.height; ++y) {
    const unsigned char* in = &raw[static_cast<size_t>(y) * (stride + 1)];
    const int filter = in[0];
    for (size_t i = 0; i < stride; ++i) {
      const int a = i >= static_cast<size_t>(bpp) ? row[i - bpp] : 0;
      const int b = prev[i], c = i >= static_cast<size_t>(bpp) ? prev[i - bpp] : 0;
      const int pred = filter == 1   ? a
                       : filter == 2 ? b
                       : filter == 3 ? (a + b) / 2
                       : filter == 4 ? paeth(a, b, c)
                                     : 0;
      row[i] = static_cast<unsigned char>(in[1 + i] + pred);
    }
    for (int x = 0; x < out.width; ++x) {
      const unsigned char* p = &row[static_cast<size_t>(x) * bpp];
      out.rgb.push_back((uint32_t{p[0]} << 16) | (uint32_t{p[1]} << 8) | p[2]);
    }
    prev = row;
  }
  return "";
}

void check_screenshot(const fs::path& png) {
  Pixels px;
  const std::string error = decode_png(read_file(png), px);
  if (!error.empty()) return fail("screenshot " + png.string() + ": " + error);
  std::set<uint32_t> colours(px.rgb.begin(), px.rgb.end());
  size_t inked = 0;
  for (uint32_t c : px.rgb) inked += c != 0xFFFFFF ? 1 : 0;
  const double share = px.rgb.empty() ? 0 : static_cast<double>(inked) / px.rgb.size();
  std::printf("screenshot: %d x %d, %zu colours, %.1f%% of pixels not white\n", px.width, px.height,
              colours.size(), 100 * share);
  // A blank or unstyled page has one colour or a few; the same page without its pictures
  // (text only, antialiased) has a few hundred but 2.5% of its pixels inked, where the views
  // ink 13%. The bars' fills are the page's phase colours exactly (light mode: headless
  // Chromium's default), so each must cover some pixels.
  if (colours.size() < 50) {
    fail("the screenshot has only " + std::to_string(colours.size()) +
         " colours: the page did not render");
  }
  if (share < 0.06) fail("the screenshot is almost all white: the views did not render");
  const std::array<std::pair<uint32_t, const char*>, 3> phases = {
      {{0x0072B2, "forward"}, {0xD55E00, "backward"}, {0x009E73, "optimizer"}}};
  for (const auto& [rgb, phase] : phases) {
    size_t n = 0;
    for (uint32_t c : px.rgb) n += c == rgb ? 1 : 0;
    std::printf("  %s colour: %zu pixels\n", phase, n);
    if (n < 200) fail(std::string("no ") + phase + " bars in the screenshot (their colour)");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: prism_browser_check PRISM_EXECUTABLE WORK_DIR\n");
    return 2;
  }
  const std::string browser = find_browser();
  if (browser.empty()) {
    std::printf(
        "skipped: no headless Chromium (install chromium-headless-shell; `make test` "
        "does)\n");
    return 77;
  }
  const fs::path work = fs::absolute(argv[2]);
  fs::remove_all(work);
  fs::create_directories(work);
  const fs::path page = work / "report.html";
  if (run("'" + std::string(argv[1]) +
          "' train mlp --data spirals --steps 30 --profile-steps 10 --threads 1 --report '" +
          page.string() + "' > '" + (work / "train.txt").string() + "'") != 0) {
    fail("prism train --report failed (see " + (work / "train.txt").string() + ")");
    return 1;
  }

  // One run renders the DOM (to stdout), another takes the screenshot; both log the console to
  // stderr and every network event to a net log. No sandbox: CI runs as root.
  const std::string flags =
      "--no-sandbox --disable-gpu --hide-scrollbars --window-size=1000,1800 "
      "--enable-logging=stderr --v=0 ";
  const std::string url = "file://" + page.string();
  const fs::path dom = work / "dom.html", shot = work / "shot.png", net = work / "net.json",
                 log = work / "browser.txt";
  if (run(browser + " " + flags + "--log-net-log='" + net.string() + "' --dump-dom '" + url +
          "' > '" + dom.string() + "' 2> '" + log.string() + "'") != 0 ||
      run(browser + " " + flags + "--screenshot='" + shot.string() + "' '" + url + "' 2>> '" +
          log.string() + "'") != 0) {
    fail("the browser failed (its log: " + log.string() + ")");
    return 1;
  }

  // Console messages reach stderr as "...:CONSOLE(line)] ..." lines; level ERROR is a failure.
  std::istringstream lines(read_file(log));
  for (std::string line; std::getline(lines, line);) {
    if (line.find("CONSOLE") != std::string::npos && line.find(":ERROR:") != std::string::npos) {
      fail("console error: " + line);
    }
  }
  // Every URL the net log names is the page itself.
  const std::string netlog = read_file(net);
  if (netlog.empty()) fail("the browser wrote no net log");
  for (const char* scheme : {"\"http://", "\"https://", "\"ws://", "\"wss://", "\"ftp://"}) {
    if (netlog.find(scheme) != std::string::npos) {
      fail(std::string("the page made a network request (") + scheme + "... in the net log)");
    }
  }
  // The rendered DOM: the three views' pictures, each with shapes in it.
  const std::string rendered = read_file(dom);
  const size_t svgs = count(rendered, "<svg");
  std::printf("rendered DOM: %zu bytes, %zu svg, %zu rect, %zu circle, %zu polygon\n",
              rendered.size(), svgs, count(rendered, "<rect"), count(rendered, "<circle"),
              count(rendered, "<polygon"));
  // Op breakdown, memory timeline, module icicle, step time; the roofline too where `prism
  // machine` has cached this machine's peaks (else a note takes its place).
  if (svgs < 4) fail("the rendered page has " + std::to_string(svgs) + " <svg>, not 4 views");
  if (count(rendered, "<rect") < 10) fail("the op breakdown drew fewer than 10 bars");
  if (count(rendered, "<polygon") < 1) fail("the memory timeline drew no curve");
  check_screenshot(shot);

  std::printf("%s\n", failures == 0 ? "the report renders in a real browser" : "FAILED");
  return failures == 0 ? 0 : 1;
}
