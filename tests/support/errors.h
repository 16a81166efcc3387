// The message of the eagle2::Error that f throws. Throwing anything else, or nothing, is a test
// failure (reported here, with an empty message returned), so that a check of an exact error
// message can never pass by accident.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <functional>
#include <string>

#include "core/error.h"

namespace eagle2::test {

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw a non-Error exception: " << e.what();
    return "";
  }
  ADD_FAILURE() << "did not throw";
  return "";
}

}  // namespace eagle2::test
