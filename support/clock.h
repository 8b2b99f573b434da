// support/clock.h — wall-clock time as archdb records it: UTC, ISO 8601, to the second.
#pragma once

#include <string>

namespace archdb {

std::string utc_now();  // "2026-12-02T19:04:03Z"

}  // namespace archdb
