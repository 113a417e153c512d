// Where squeeze-nccl-perf finds what it needs at run time. The build folder may be carried
// to another machine (a GPU machine with the same checkout in another place), so compiled-in
// paths are only the last resort: first what sits next to the executable.
#pragma once

#include <string>
#include <vector>

namespace squeeze::perf::nccl {

std::string self_exe();  // /proc/self/exe, resolved

// The Squeeze source tree (config/, perf/nccl/policies/): $SQUEEZE_SOURCE_DIR, the tree two
// levels above a build-tree executable (<src>/<build>/perf/squeeze-nccl-perf), then the one
// this was built from.
std::string default_source_dir();

// The plugin: next to a build tree's executable (../plugin/), an install's (../lib/), then
// the one built with this tool.
std::string default_plugin_path();

// libnccl candidates in order: $SQUEEZE_NCCL_LIB, the CUDA toolkit's found at build time,
// then "libnccl.so.2" for the loader's own search (LD_LIBRARY_PATH, ld.so.cache).
std::vector<std::string> nccl_lib_candidates();

bool file_exists(const std::string& path);
std::string absolute_path(const std::string& path);  // realpath, or the path unchanged

}  // namespace squeeze::perf::nccl
