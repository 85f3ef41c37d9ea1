# Writes OUTPUT, a C++ file defining rudnn::device::embeddedHeaders() with the
# contents of FILES (paths relative to ROOT), each named "rudnn/<path>".
set(delimiter "rudnn_embedded")
set(entries "")
foreach(file ${FILES})
  file(READ ${ROOT}/${file} contents)
  string(FIND "${contents}" ")${delimiter}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${file} contains the embedding delimiter")
  endif()
  string(APPEND entries
    "      {\"rudnn/${file}\", R\"${delimiter}(${contents})${delimiter}\"},\n")
endforeach()
file(WRITE ${OUTPUT}.tmp
"// Generated from codegen/device by EmbedHeaders.cmake; do not edit.
#include \"codegen/device/DeviceLibrary.h\"

const std::vector<rudnn::device::EmbeddedHeader> &
rudnn::device::embeddedHeaders() {
  static const std::vector<EmbeddedHeader> headers = {
${entries}  };
  return headers;
}
")
file(COPY_FILE ${OUTPUT}.tmp ${OUTPUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUTPUT}.tmp)
