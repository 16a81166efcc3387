// The machine an engine runs on: its worker threads and the SIMD path its kernels take.
#pragma once

#include <memory>

namespace eagle2::api {

// The worker threads every computing call runs on (one pool per engine: the model, the head and
// the decoding loops of one caller share it). Calls that take Threads& must come from one thread
// at a time.
class Threads {
 public:
  // n counts the calling thread, which takes part in the work: 1 means no workers. Error
  // "cannot start N threads: ..." if the system refuses a thread.
  explicit Threads(int n);
  ~Threads();
  Threads(Threads&&) noexcept;
  Threads& operator=(Threads&&) noexcept;

  int size() const;

  // The library's side of the handle (defined in src/api, opaque here).
  struct Impl;
  Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// The machine's physical cores: the default thread count.
int default_thread_count();

// The SIMD path the kernels take: "scalar", "avx2" or "avx512" (the best the CPU has, unless the
// environment variable EAGLE2_KERNEL forces one; Error for a path the CPU lacks).
const char* kernel_name();

}  // namespace eagle2::api
