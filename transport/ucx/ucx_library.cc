#include "transport/ucx/ucx_library.h"

#include <dlfcn.h>

#include <cstring>

namespace squeeze::transport::ucx {

std::shared_ptr<const Library> Library::open(const std::string& path_in, std::string* why) {
  const std::string path = path_in.empty() ? kDefaultLibrary : path_in;
  std::shared_ptr<Library> lib(new Library());
  // RTLD_NODELETE: UCX's memory hooks (libucm) patch the process; unmapping the libraries at
  // dlclose would leave those patches pointing at nothing.
  lib->handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (lib->handle_ == nullptr) {
    const char* err = dlerror();
    *why = "cannot load " + path + ": " + (err != nullptr ? err : "unknown dlopen error");
    return nullptr;
  }
  auto resolve = [&](const char* symbol, auto* fn) {
    dlerror();
    void* p = dlsym(lib->handle_, symbol);
    if (p == nullptr) return false;
    static_assert(sizeof(*fn) == sizeof(p));
    std::memcpy(fn, &p, sizeof(p));  // object pointer -> function pointer, without a cast
    return true;
  };
#define SQUEEZE_UCX_RESOLVE(member, symbol)                                  \
  if (!resolve(#symbol, &lib->api_.member)) {                                \
    *why = path + " does not export " #symbol " (not a usable UCX library)"; \
    return nullptr;                                                          \
  }
  SQUEEZE_UCX_FUNCTIONS(SQUEEZE_UCX_RESOLVE)
#undef SQUEEZE_UCX_RESOLVE

  unsigned major = 0, minor = 0, release = 0;
  lib->api_.get_version(&major, &minor, &release);
  lib->version_ =
      std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(release);

  return lib;
}

Library::~Library() {
  if (handle_ != nullptr) dlclose(handle_);
}

}  // namespace squeeze::transport::ucx
