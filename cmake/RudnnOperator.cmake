# rudnn_add_operator(<family>): adds an operator family to every layer, each
# layer's sources from the family's own folder in it:
#
#   dialects/IR/<family>/     contracts and policies (*Contracts.cpp,
#                             *Policy.cpp: plain C++) to RudnnContracts,
#                             the ops and their interfaces to RudnnDialect
#   codegen/Emit/<family>/    the primitives' kernel emission, to
#                             RudnnEmitModule
#   lib/reference/<family>/   the float64 reference, to RudnnReference
#   lib/<family>/             the typed C++ entry points, to RudnnApi
#
# A folder a family does not need may be absent. Its ODS file is included by
# dialects/IR/RudnnOps.td and its registration functions are called by
# codegen/InitRudnn.cpp and lib/reference/OperatorReferences.cpp, one line
# each (docs/adding-an-operator.md). The ODS file RudnnOps.td includes for
# the family also gives the family's generated op classes
# (dialects/IR/<family>/<file>.cpp.inc), which one of its sources includes
# after the functions their ODS definitions call.
function(rudnn_add_operator family)
  file(STRINGS ${PROJECT_SOURCE_DIR}/dialects/IR/RudnnOps.td ods
       REGEX "^include \"dialects/IR/${family}/[A-Za-z]+\\.td\"$")
  string(REGEX REPLACE "^include \"(.*)\\.td\"$" "\\1" ods "${ods}")
  if(NOT ods)
    message(FATAL_ERROR "dialects/IR/RudnnOps.td includes no ODS file of "
                        "operator family '${family}'")
  endif()
  set(LLVM_TARGET_DEFINITIONS ${PROJECT_SOURCE_DIR}/${ods}.td)
  mlir_tablegen(${ods}.cpp.inc -gen-op-defs
                EXTRA_INCLUDES ${MLIR_INCLUDE_DIRS} ${PROJECT_SOURCE_DIR})
  add_public_tablegen_target(RudnnIncGen_${family})
  add_dependencies(RudnnDialect RudnnIncGen_${family})
  macro(family_sources var folder)
    file(GLOB ${var} CONFIGURE_DEPENDS
         ${PROJECT_SOURCE_DIR}/${folder}/${family}/*.cpp)
  endmacro()
  family_sources(ir dialects/IR)
  set(contracts ${ir})
  list(FILTER contracts INCLUDE REGEX "(Contracts|Policy)\\.cpp$")
  list(FILTER ir EXCLUDE REGEX "(Contracts|Policy)\\.cpp$")
  target_sources(RudnnContracts PRIVATE ${contracts})
  target_sources(RudnnDialect PRIVATE ${ir})
  family_sources(emit codegen/Emit)
  target_sources(RudnnEmitModule PRIVATE ${emit})
  family_sources(reference lib/reference)
  target_sources(RudnnReference PRIVATE ${reference})
  family_sources(api lib)
  target_sources(RudnnApi PRIVATE ${api})
endfunction()
