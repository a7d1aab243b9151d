#include "eddy/core/io.h"

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "eddy/core/error.h"

namespace eddy {

void write_atomic(const std::string& path, const std::function<void(const std::string& tmp)>& write) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) {
    fs::create_directories(target.parent_path(), ec);
    if (ec) throw Error("cannot create folder '" + target.parent_path().string() + "': " + ec.message());
  }
  // The temporary keeps the extension last, for libraries that look at it.
  const fs::path tmp = target.parent_path() / ("." + target.stem().string() + ".tmp" + std::to_string(::getpid()) +
                                               target.extension().string());
  try {
    write(tmp.string());
  } catch (...) {
    fs::remove(tmp, ec);
    throw;
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw Error("cannot rename '" + tmp.string() + "' to '" + path + "'");
  }
}

void write_file_atomic(const std::string& path, const std::string& data) {
  write_atomic(path, [&](const std::string& tmp) {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw Error("cannot write '" + tmp + "'");
    f.write(data.data(), static_cast<std::streamsize>(data.size()));
    f.flush();
    if (!f) throw Error("failed writing '" + tmp + "' (disk full?)");
  });
}

std::string lower_extension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (auto& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

std::string format_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024.0 && u < 4) {
    b /= 1024.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", b, units[u]);
  return buf;
}

std::string read_file(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw Error(path + ": " + what + " does not exist");
  if (std::filesystem::is_directory(path, ec)) throw Error(path + ": is a folder, expected a " + what);
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(path + ": cannot open " + what);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

double physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? double(pages) * double(page) : 8.0 * (1ull << 30);
}

}  // namespace eddy
