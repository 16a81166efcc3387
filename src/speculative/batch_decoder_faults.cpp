// How BatchDecoder keeps a step's faults per sequence: a sequence that fails in its own part of a
// step ends alone and is reported (failed_in_last_step(), failed()); the step as a whole throws
// only when its forward failed or none of its sequences survived.
#include <exception>

#include "core/error.h"
#include "speculative/batch_decoder.h"
#include "speculative/batch_decoder_sequence.h"

namespace eagle2 {

void BatchDecoder::reset_failures() {
  failed_in_forward_ = false;
  failed_in_step_.clear();
  first_failure_ = nullptr;
}

void BatchDecoder::injected_fault(const Sequence& s, GenerationOptions::TestFault at) const {
  if (s.options.test_fault == at && s.stats.cycles >= s.options.test_fault_after_cycles)
    fail(at == GenerationOptions::TestFault::Drafting ? "injected test fault in drafting"
                                                      : "injected test fault in verification");
}

// s failed in its own part of the step (drafting, verification or its prompt's progress): it
// ends here, alone. Its drafter and cache may be half-updated, so both go (the cache's rows of this
// step's forward first: the pool holds committed rows only); the other sequences go on untouched.
void BatchDecoder::fail_alone(Sequence& s, std::exception_ptr error) {
  s.kv.drop_pending();
  finish(s);
  s.failed = true;
  failed_in_step_.push_back(s.id);
  if (!first_failure_) first_failure_ = std::move(error);
}

int64_t BatchDecoder::step_alone(int64_t id) {
  Sequence& s = at(id);
  // Even a no-op reports on itself, not on the step before it (a server reads these after it).
  reset_failures();
  if (s.finished) return live();
  alone_ = &s;
  try {
    step();
  } catch (...) {
    alone_ = nullptr;
    throw;
  }
  alone_ = nullptr;
  return live();
}

int64_t BatchDecoder::step() {
  last_step_ = StepReport{};
  reset_failures();
  const int64_t survivors = step_sequences();
  // Every sequence of the step failed on its own: the step as a whole failed (with the first
  // failure), as a step of one sequence always did. With a survivor, the failures are reported.
  if (first_failure_ && survivors == 0) std::rethrow_exception(first_failure_);
  return live();
}

}  // namespace eagle2
