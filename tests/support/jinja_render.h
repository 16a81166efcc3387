// Rendering a template in tests: render() gives the text, render_error() the one error message
// (failing the test when there is none).
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "chat/jinja_template.h"
#include "support/errors.h"

namespace eagle2::test {

// The date of the golden renderings, for strftime_now.
inline jinja::Date pinned_date() {
  jinja::Date d;
  d.year = 2026, d.month = 11, d.day = 30;
  return d;
}

// `variables` may be {} (null) for none.
inline std::string render(
    const std::string& source,
    const nlohmann::ordered_json& variables = nlohmann::ordered_json::object(),
    const jinja::Limits& limits = {}) {
  return jinja::Template(source, "t.jinja", limits)
      .render(variables.is_null() ? nlohmann::ordered_json::object() : variables, pinned_date());
}

inline std::string render_error(
    const std::string& source,
    const nlohmann::ordered_json& variables = nlohmann::ordered_json::object(),
    const jinja::Limits& limits = {}) {
  return error_of([&] { render(source, variables, limits); });
}

}  // namespace eagle2::test
