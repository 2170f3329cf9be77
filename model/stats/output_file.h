// output_file.h - what every statistics file (--trace, --traffic) does at
// its end: close it and say whether every byte reached it.
#pragma once

#include <cstdio>
#include <string>

namespace p2 {

// Closes `out` (and sets it to nullptr; nothing when already null): "" when
// every byte was written, else why not, naming `path`. A full disk shows only
// here: the writes before are buffered.
std::string close_output(std::FILE*& out, const std::string& path);

}  // namespace p2
