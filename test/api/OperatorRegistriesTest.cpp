//===- OperatorRegistriesTest.cpp - Every operator in every registry ------===//
//
// An operator joins the registries from its own files; this checks that
// none was left out of one.
//
//===----------------------------------------------------------------------===//

#include "lib/reference/OperatorReferences.h"

#include "rudnn/errors.h"
#include "rudnn/operator.h"

#include <gtest/gtest.h>

using namespace rudnn;

TEST(OperatorRegistries, EveryOperatorHasAFloat64Reference) {
  const std::vector<std::string> operators = operatorNames();
  ASSERT_GE(operators.size(), 17u);
  for (const std::string &op : operators)
    EXPECT_NE(reference::referenceFor(op), nullptr) << op;
  EXPECT_EQ(reference::referenceFor("rudnn.no_such_operator"), nullptr);
}

TEST(OperatorRegistries, AnOperatorRegisteredTwiceIsRefused) {
  reference::ReferenceRegistry registry;
  reference::registerNormReferences(registry);
  EXPECT_NE(registry.find("rudnn.layer_norm"), nullptr);
  EXPECT_EQ(registry.find("rudnn.attention"), nullptr);
  EXPECT_THROW(reference::registerNormReferences(registry), Error);
}
