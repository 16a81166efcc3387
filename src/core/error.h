// eagle2::Error and fail() are part of the public API (include/eagle2/error.h): the one exception
// type the engine throws and its callers catch. This header keeps the internal spelling.
#pragma once

#include "eagle2/error.h"
