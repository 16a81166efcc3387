// eagle2/runtime.h over core/thread_pool.h and kernels/cpu.h.
#include "eagle2/runtime.h"

#include "api/handles.h"
#include "kernels/cpu.h"

namespace eagle2::api {

Threads::Threads(int n) : impl_(std::make_unique<Impl>(n)) {}
Threads::~Threads() = default;
Threads::Threads(Threads&&) noexcept = default;
Threads& Threads::operator=(Threads&&) noexcept = default;
int Threads::size() const {
  return impl_->pool.size();
}

int default_thread_count() {
  return eagle2::default_thread_count();
}

const char* kernel_name() {
  return kernel_path_name(active_kernel_path());
}

}  // namespace eagle2::api
