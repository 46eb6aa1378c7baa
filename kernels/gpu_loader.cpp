// The gpu:: API (contract: kernels/gpu_runtime.h) as libprism_kernels implements it: the CUDA
// backend, libprism_cuda.so, is opened the first time something needs the GPU, and every call is
// forwarded to the table it exports (kernels/gpu_backend.h says why it is a separate library).
// In a build without CUDA nothing is ever loaded and every call that needs a device says why.
//
// Thread safety. Loading happens once, under std::call_once; the table is then published with
// one atomic store, so a forwarding call costs an acquire load (a plain load on x86) and an
// indirect call. Calls that only tidy up (release, synchronize, timer_end, NVTX) do not load the
// backend: if it is not loaded, no device memory, timer or range of its can exist.
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/gpu_backend.h"
#include "kernels/gpu_runtime.h"
#include "kernels/registry.h"
#include "kernels/types.h"

namespace prism::kernels::gpu {

namespace {

// Set once the backend is loaded and its kernels are registered; never unset (kernels registered
// from the library point into it, so it is never closed).
std::atomic<const BackendTable*> g_table{nullptr};

struct LoadState {
  std::once_flag once;
  std::string path;   // the file loaded
  std::string error;  // why nothing was loaded
};

LoadState& load_state() {
  static LoadState* s = new LoadState;  // never destroyed: tensors may be freed during teardown
  return *s;
}

// True on a thread that is inside the load (registering the backend's kernels): a nested
// load_backend() there answers "not loaded" instead of deadlocking in std::call_once.
thread_local bool t_loading = false;

#ifdef PRISM_HAS_CUDA

std::string directory_of(const std::string& file) {
  const size_t slash = file.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : file.substr(0, slash);
}

// The directory of the library this code is in (libprism_kernels.so): the backend is built
// beside it, and this holds wherever the build or install directory is moved.
std::string this_library_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&load_backend), &info) == 0 || !info.dli_fname) return "";
  return directory_of(info.dli_fname);
}

// The executable's directory: the same place in the build tree; a second chance if the
// library above was linked statically into the program.
std::string executable_dir() {
  std::vector<char> buf(4096);
  const ssize_t n = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n <= 0) return "";
  return directory_of(std::string(buf.data(), static_cast<size_t>(n)));
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// Opens `path` and checks that it is a backend built from these sources; nullptr and *why if not.
const BackendTable* open_backend(const std::string& path, std::string* why) {
  (void)dlerror();
  // RTLD_NOW: a missing symbol is an error here, not a crash at the first call that needs it.
  // RTLD_LOCAL: nothing in the process needs its symbols except through the table.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = dlerror();
    *why = e ? e : path + ": dlopen failed";
    return nullptr;
  }
  auto fail = [&](const std::string& what) -> const BackendTable* {
    *why = path + ": " + what;
    dlclose(handle);
    return nullptr;
  };
  (void)dlerror();
  void* sym = dlsym(handle, kBackendEntry);
  if (!sym) {
    const char* e = dlerror();
    return fail(std::string("not a prism CUDA backend (") + (e ? e : kBackendEntry) + ")");
  }
  const BackendTable* t = reinterpret_cast<BackendEntry>(sym)();
  if (!t) return fail("the backend returned no table");
  // `abi` first: the rest of the layout is only known to match once it does.
  const bool same = t->abi == kBackendAbi && t->table_size == sizeof(BackendTable) &&
                    std::strcmp(t->fingerprint, PRISM_GPU_BACKEND_FINGERPRINT) == 0;
  if (!same) {
    const std::string theirs =
        std::to_string(t->abi) +
        (t->abi == kBackendAbi ? std::string("/") + t->fingerprint : std::string());
    const std::string ours = std::to_string(kBackendAbi) + "/" + PRISM_GPU_BACKEND_FINGERPRINT;
    return fail("built from different prism sources (backend interface " + theirs +
                ", this prism needs " + ours +
                "); use the " PRISM_CUDA_BACKEND_FILE " built with this prism");
  }
  return t;
}

// Where the backend is: $PRISM_CUDA_BACKEND if set, else the first directory that has it. ""
// and *why if there is none to try.
std::string backend_file(std::string* why) {
  if (const char* env = std::getenv("PRISM_CUDA_BACKEND"); env && *env) {
    // An explicit choice is the only place looked at: loading another file instead would hide
    // the mistake. dlopen says what is wrong with it.
    return env;
  }
  std::vector<std::string> dirs;
  for (const std::string& d : {this_library_dir(), executable_dir()}) {
    bool seen = d.empty();
    for (const std::string& e : dirs) seen = seen || e == d;
    if (!seen) dirs.push_back(d);
  }
  std::string looked;
  for (const std::string& d : dirs) {
    const std::string candidate = d + "/" + PRISM_CUDA_BACKEND_FILE;
    if (file_exists(candidate)) return candidate;
    looked += (looked.empty() ? "" : ", ") + d;
  }
  *why = PRISM_CUDA_BACKEND_FILE " is not in " +
         (looked.empty() ? std::string("the executable's directory") : looked) +
         " (build the prism_cuda target, e.g. make build, or set PRISM_CUDA_BACKEND to its path)";
  return "";
}

void load_once() {
  LoadState& s = load_state();
  const char* env = std::getenv("PRISM_CUDA_BACKEND");
  const std::string prefix =
      env && *env ? "cannot load the CUDA backend (PRISM_CUDA_BACKEND=" + std::string(env) + "): "
                  : "cannot load the CUDA backend: ";
  std::string why;
  const std::string path = backend_file(&why);
  const BackendTable* t = path.empty() ? nullptr : open_backend(path, &why);
  if (!t) {
    s.error = prefix + why;
    return;
  }
  try {
    Registry& r = registry();  // the CPU kernels first: CUDA ops copy their cost formulas
    t->register_kernels(r);
    reapply_kernel_choices(Device::cuda);  // --kernel and PRISM_KERNELS made before now
  } catch (const std::exception& e) {
    // The library stays mapped (some kernels may be registered from it) but is not used.
    s.error = prefix + "registering its kernels from " + path + " failed: " + e.what();
    return;
  }
  s.path = path;
  // Published last: another thread that sees the table also sees every CUDA kernel registered.
  g_table.store(t, std::memory_order_release);
}

#else

void load_once() {
  load_state().error =
      "prism was built without CUDA (no CUDA compiler was found when it was configured, or "
      "PRISM_CUDA was OFF)";
}

#endif

// The table if the backend is loaded (loading it now if need be), else nullptr.
const BackendTable* table() {
  if (const BackendTable* t = g_table.load(std::memory_order_acquire)) return t;
  return load_backend() ? g_table.load(std::memory_order_acquire) : nullptr;
}

// The table if the backend is already loaded; never loads it.
const BackendTable* loaded() {
  return g_table.load(std::memory_order_acquire);
}

// Why the backend is not loaded (after load_backend() returned false).
std::string load_error() {
  const std::string& e = load_state().error;
  return e.empty() ? "the CUDA backend is still being loaded (asked while registering it)" : e;
}

// The table, or an Error "<what>: CUDA is not available: <why it could not be loaded>".
const BackendTable& need(const char* what) {
  if (const BackendTable* t = table()) return *t;
  throw Error(std::string(what) + ": CUDA is not available: " + load_error());
}

}  // namespace

// ---- the backend library -----------------------------------------------------------------------

bool load_backend() {
  if (loaded()) return true;
  if (t_loading) return false;  // re-entered while registering: see t_loading
  LoadState& s = load_state();
  std::call_once(s.once, [] {
    struct Loading {
      Loading() { t_loading = true; }
      ~Loading() { t_loading = false; }
    } loading;
    load_once();
  });
  return loaded() != nullptr;
}

bool backend_loaded() {
  return loaded() != nullptr;
}

std::string backend_path() {
  return backend_loaded() ? load_state().path : std::string();
}

// ---- availability ------------------------------------------------------------------------------

bool built() {
#ifdef PRISM_HAS_CUDA
  return true;
#else
  return false;
#endif
}

bool available() {
  const BackendTable* t = table();
  return t && t->available();
}

std::string unavailable_reason() {
  const BackendTable* t = table();
  return t ? t->unavailable_reason() : load_error();
}

void require(const char* what) {
  if (!available()) {
    throw Error(std::string(what) + ": CUDA is not available: " + unavailable_reason());
  }
}

DeviceInfo device_info() {
  return need("device_info").device_info();
}

// ---- memory ------------------------------------------------------------------------------------

void* allocate(size_t nbytes) {
  return need("allocate").allocate(nbytes);
}
void release(void* p, size_t nbytes) {
  if (const BackendTable* t = loaded()) t->release(p, nbytes);
}
void empty_cache() {
  if (const BackendTable* t = loaded()) t->empty_cache();
}
CacheStats cache_stats() {
  const BackendTable* t = loaded();
  return t ? t->cache_stats() : CacheStats{};
}

void* allocate_managed(size_t nbytes) {
  return need("allocate_managed").allocate_managed(nbytes);
}
void release_managed(void* p, size_t nbytes) {
  if (const BackendTable* t = loaded()) t->release_managed(p, nbytes);
}
void prefetch_to_device(const void* p, size_t nbytes) {
  need("prefetch_to_device").prefetch_to_device(p, nbytes);
}

// ---- copies and synchronisation ----------------------------------------------------------------

void copy_to_device(void* dst, const void* src, size_t nbytes) {
  need("copy_to_device").copy_to_device(dst, src, nbytes);
}
void copy_to_host(void* dst, const void* src, size_t nbytes) {
  need("copy_to_host").copy_to_host(dst, src, nbytes);
}
void copy_on_device(void* dst, const void* src, size_t nbytes) {
  need("copy_on_device").copy_on_device(dst, src, nbytes);
}
void memset_zero(void* dst, size_t nbytes) {
  need("memset_zero").memset_zero(dst, nbytes);
}
void synchronize() {
  if (const BackendTable* t = loaded()) t->synchronize();
}

// ---- timing ------------------------------------------------------------------------------------
// The profiler resets the timer at the start of every session, GPU or not: that must not load
// the backend. A GPU op's timer_begin comes after its tensors exist, so the backend is loaded.

void timer_reset() {
  if (const BackendTable* t = loaded()) t->timer_reset();
}
int32_t timer_begin() {
  const BackendTable* t = loaded();
  return t ? t->timer_begin() : -1;
}
void timer_end(int32_t slot) {
  if (const BackendTable* t = loaded()) t->timer_end(slot);
}
bool timer_read(int32_t slot, int64_t* start_ns, int64_t* dur_ns) {
  const BackendTable* t = loaded();
  return t && t->timer_read(slot, start_ns, dur_ns);
}

GpuPeaks measure_peaks(int reps) {
  return need("measure_peaks").measure_peaks(reps);
}

// ---- NVTX --------------------------------------------------------------------------------------

void range_push(const char* name) {
  if (const BackendTable* t = loaded()) t->range_push(name);
}
void range_pop() {
  if (const BackendTable* t = loaded()) t->range_pop();
}

}  // namespace prism::kernels::gpu
