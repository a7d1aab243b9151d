#pragma once
// File helpers shared by every writer and reader.
#include <functional>
#include <string>

namespace eddy {

// Writes `data` to `path` through a temporary file in the same folder and a
// rename, so readers never see a half-written file. Creates parent folders.
// Throws eddy::Error naming the path.
void write_file_atomic(const std::string& path, const std::string& data);
// The same for writers that need a file name: write(tmp) writes the whole
// file at tmp (same folder and extension as path), which is then renamed to
// path; on any exception tmp is removed and the exception passes on.
void write_atomic(const std::string& path, const std::function<void(const std::string& tmp)>& write);
// Whole file; throws eddy::Error naming the path when missing or unreadable.
std::string read_file(const std::string& path, const std::string& what = "file");
// The extension of a path in lower case, with its dot (".obj"); "" if none.
std::string lower_extension(const std::string& path);
// "1.5 GiB", "320 MiB", ...
std::string format_bytes(double bytes);
// Physical memory of this machine, bytes.
double physical_memory_bytes();

}  // namespace eddy
