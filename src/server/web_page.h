// The web page served at GET /: src/server/web/index.html, compiled into the binary (CMake turns
// the file into a byte array at build time: src/server/web/embed.cmake), so that the server needs
// no files beside it and the page always matches the server it came with.
#pragma once

#include <string_view>

namespace eagle2::server {

std::string_view index_html();

}  // namespace eagle2::server
