# Turns the help texts docs/help/NAME.txt into C: const char cli_help_NAME[] = "...";
# one file, OUT, compiled into the amk executable. The texts are kept as plain text so
# they read and diff as documentation, and tests/man_page.sh holds them against docs/amk.1.
# usage: cmake -DHELP_DIR=docs/help -DOUT=cli_help.c -P embed_help.cmake
file(GLOB texts "${HELP_DIR}/*.txt")
list(SORT texts)
set(c "/* Generated from the texts in docs/help/ by cmake/embed_help.cmake: edit those files. */\n")
string(APPEND c "#include \"cli_int.h\"\n")
foreach(path IN LISTS texts)
  get_filename_component(name "${path}" NAME_WE)
  if(NOT name MATCHES "^[a-z][a-z0-9_]*$")
    message(FATAL_ERROR "${path}: a help file is named after its command (lower case)")
  endif()
  file(READ "${path}" text)
  if(NOT text MATCHES "\n$")
    message(FATAL_ERROR "${path}: the last line must end with a newline")
  endif()
  # C string literal: escape \ " and ? (no trigraphs), one literal per line.
  string(REPLACE "\\" "\\\\" text "${text}")
  string(REPLACE "\"" "\\\"" text "${text}")
  string(REPLACE "?" "\\?" text "${text}")
  string(REGEX REPLACE "\n$" "" text "${text}")
  string(REPLACE "\n" "\\n\"\n    \"" text "${text}")
  string(APPEND c "\nconst char cli_help_${name}[] =\n    \"${text}\\n\";\n")
endforeach()
# Rewrite only on a change, so an unchanged text does not relink amk.
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL c)
  file(WRITE "${OUT}" "${c}")
endif()
