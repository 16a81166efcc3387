// parse_number() is part of the public API (include/eagle2/parse_number.h): the engine and the
// tools parse every number a user writes by the same rule. This header keeps the internal spelling.
#pragma once

#include "eagle2/parse_number.h"
