#pragma once
/// @file find_program.hpp
/// Where a program is: `name` itself when it holds a '/', else the first executable file of
/// that name in PATH (as execvp would find it); empty when there is none.

#include <string>

namespace sb {

[[nodiscard]] std::string find_program(const std::string& name);

}  // namespace sb
