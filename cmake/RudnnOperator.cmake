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
# each (docs/adding-an-operator.md).
function(rudnn_add_operator family)
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
