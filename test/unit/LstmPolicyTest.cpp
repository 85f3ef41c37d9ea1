//===- LstmPolicyTest.cpp - The LSTM's contracts and recurrence policy ----===//

#include "dialects/IR/lstm/LstmPolicy.h"
#include "dialects/IR/lstm/LstmContracts.h"

#include <gtest/gtest.h>

using namespace rudnn;
using namespace mlir::rudnn;

namespace {

std::vector<std::string> operandNames(const OperatorContract &contract) {
  std::vector<std::string> names;
  for (const TensorContract &t : contract.operands)
    names.emplace_back(t.name);
  return names;
}

TEST(LstmContract, NamesTheStateDictsTensorsInItsOrder) {
  const OperatorContract &c = lstmContract({2, true, true, false});
  const std::vector<std::string> expected = {"x",
                                             "h0",
                                             "c0",
                                             "lengths",
                                             "weight_ih_l0",
                                             "weight_hh_l0",
                                             "bias_ih_l0",
                                             "bias_hh_l0",
                                             "weight_ih_l0_reverse",
                                             "weight_hh_l0_reverse",
                                             "bias_ih_l0_reverse",
                                             "bias_hh_l0_reverse",
                                             "weight_ih_l1",
                                             "weight_hh_l1",
                                             "bias_ih_l1",
                                             "bias_hh_l1",
                                             "weight_ih_l1_reverse",
                                             "weight_hh_l1_reverse",
                                             "bias_ih_l1_reverse",
                                             "bias_hh_l1_reverse"};
  EXPECT_EQ(operandNames(c), expected);
  // Layer 0 reads the input features, later layers both directions.
  EXPECT_EQ(c.operands[c.operandIndex("weight_ih_l0")].layout, "GI");
  EXPECT_EQ(c.operands[c.operandIndex("weight_ih_l1")].layout, "GE");
  const DimContract *gates = c.dim('G'), *outputs = c.dim('E'),
                    *states = c.dim('N');
  EXPECT_EQ(gates->timesOf, 'H');
  EXPECT_EQ(gates->times, 4);
  EXPECT_EQ(outputs->times, 2);
  EXPECT_EQ(states->min, 4);
  EXPECT_EQ(states->max, 4);
}

TEST(LstmContract, TheBackwardTakesTheSavedTensorsAndNamesEachGradient) {
  const OperatorContract &c = lstmBackwardContract({2, true, true, false});
  EXPECT_EQ(c.op, "rudnn.lstm_backward");
  const char *leading[] = {"x",     "h0",    "c0",    "lengths", "hidden",
                           "cells", "gates", "d_out", "d_h_n",   "d_c_n"};
  ASSERT_EQ(c.operands.size(), kLstmBackwardLeadingOperands + 16);
  for (unsigned i = 0; i < kLstmBackwardLeadingOperands; ++i)
    EXPECT_EQ(c.operands[i].name, leading[i]);
  EXPECT_EQ(c.operands[kLstmBackwardLeadingOperands].name, "weight_ih_l0");
  EXPECT_FALSE(c.operands[c.operandIndex("cells")].optional);
  EXPECT_TRUE(c.operands[c.operandIndex("gates")].optional);
  EXPECT_EQ(c.operands[c.operandIndex("hidden")].resultOf, "rudnn.lstm");
  ASSERT_EQ(c.results.size(), 3u + 16);
  EXPECT_EQ(c.results[0].name, "d_x");
  EXPECT_EQ(c.results[3].name, "d_weight_ih_l0");
  EXPECT_EQ(c.results.back().name, "d_bias_hh_l1_reverse");
  // The forward names what it saves after its results, all optional.
  const OperatorContract &f = lstmContract({2, true, true, false});
  EXPECT_EQ(f.results[3].name, "hidden");
  EXPECT_EQ(f.results[5].name, "gates");
  EXPECT_TRUE(f.results[4].optional);
}

TEST(GruContract, TheLstmsWithoutCellStatesAndThreeGates) {
  const OperatorContract &f = gruContract({2, true, true, false});
  EXPECT_EQ(f.op, "rudnn.gru");
  ASSERT_EQ(f.operands.size(), kGruLeadingOperands + 16);
  EXPECT_EQ(f.operands[1].name, "h0");
  EXPECT_EQ(f.operands[2].name, "lengths");
  EXPECT_EQ(f.operands[kGruLeadingOperands].name, "weight_ih_l0");
  const DimContract *gates = f.dim('G');
  ASSERT_NE(gates, nullptr);
  EXPECT_EQ(gates->times, 3);
  ASSERT_EQ(f.results.size(), 4u);
  EXPECT_EQ(f.results[1].name, "h_n");
  EXPECT_EQ(f.results[3].name, "gates");
  EXPECT_EQ(f.results[3].layout, "NTBV"); // r, z, n, W_hn h + b_hn
  EXPECT_NE(&f, &lstmContract({2, true, true, false}));

  const OperatorContract &b = gruBackwardContract({2, true, true, false});
  EXPECT_EQ(b.op, "rudnn.gru_backward");
  const char *leading[] = {"x",     "h0",    "lengths", "hidden",
                           "gates", "d_out", "d_h_n"};
  ASSERT_EQ(b.operands.size(), kGruBackwardLeadingOperands + 16);
  for (unsigned i = 0; i < kGruBackwardLeadingOperands; ++i)
    EXPECT_EQ(b.operands[i].name, leading[i]);
  EXPECT_FALSE(b.operands[b.operandIndex("gates")].optional);
  EXPECT_EQ(b.operands[b.operandIndex("gates")].resultOf, "rudnn.gru");
  ASSERT_EQ(b.results.size(), 2u + 16);
  EXPECT_EQ(b.results[1].name, "d_h0");
  EXPECT_EQ(b.results[2].name, "d_weight_ih_l0");
}

TEST(GruRecurrencePolicy, ThreeGateRowsAUnit) {
  // f32 from L2, 8 units: 24 rows' sums (padded to 32) beside the states.
  EXPECT_EQ(lstmRecurrenceSharedBytes(1024, 8, 4, false, 3),
            4 * 8 * 1024 + 4 * 32 * 8);
  // f32 on chip, H = 48: 24 plain rows instead of the LSTM's 32.
  EXPECT_EQ(lstmRecurrenceSharedBytes(48, 8, 4, true, 3),
            24 * 48 * 4 + 4 * 8 * 48 + 4 * 32 * 8);
  // The backward's W_hh columns are 3H deep.
  EXPECT_LT(lstmBackwardSharedBytes(512, 8, 2, true, 3),
            lstmBackwardSharedBytes(512, 8, 2, true, 4));
  // Fewer gate rows, fewer weight-gradient tiles: more splits to fill.
  EXPECT_GE(lstmGradientSplits(64, 64, 1, 132, 3),
            lstmGradientSplits(64, 64, 1, 132, 4));
}

TEST(LstmContract, OneContractPerFormKeptForTheProcess) {
  const OperatorContract &a = lstmContract({1, false, false, true});
  EXPECT_EQ(&a, &lstmContract({1, false, false, true}));
  EXPECT_NE(&a, &lstmContract({1, false, true, true}));
  EXPECT_EQ(a.operands.size(), 4u + 2u);  // no biases
  EXPECT_EQ(a.operands[0].layout, "BTI"); // batch first
  EXPECT_EQ(a.results[0].layout, "BTE");
  EXPECT_EQ(lstmWeightName(3, 2, 1), "bias_hh_l2_reverse");
}

TEST(LstmProjectionPolicy, WgmmaForSixteenBitInputsOnSm90WhereStagesFit) {
  const int64_t h200 = 232448, small = 101376;
  auto wgmma = [](int64_t bytes, int64_t capability, int64_t smem,
                  std::optional<bool> given = std::nullopt) {
    std::optional<LstmProjectionPolicy> p =
        chooseLstmProjection(bytes, capability, smem, given);
    return p ? std::optional<bool>(p->wgmma) : std::nullopt;
  };
  EXPECT_EQ(wgmma(2, 90, h200), true);
  EXPECT_EQ(wgmma(2, 90, kLstmWgmmaProjectionSharedBytes), true);
  EXPECT_EQ(wgmma(2, 90, small), false); // five stages do not fit
  EXPECT_EQ(wgmma(2, 80, h200), false);
  EXPECT_EQ(wgmma(4, 90, h200), false);
  EXPECT_EQ(wgmma(2, 90, h200, false), false); // kept as given
  EXPECT_EQ(wgmma(4, 90, h200, true), std::nullopt);
  EXPECT_EQ(wgmma(2, 80, h200, true), std::nullopt);
  EXPECT_EQ(chooseLstmProjection(2, 90, h200)->reason,
            "input projection on wgmma, 128 x 128 tiles");
  EXPECT_EQ(chooseLstmProjection(2, 80, h200)->reason,
            "input projection on mma.sync, 64 x 64 tiles");
  EXPECT_EQ(chooseLstmProjection(4, 90, h200)->reason,
            "input projection on FMA, 64 x 64 tiles");
}

TEST(LstmRecurrencePolicy, SharedBytesFollowTheTileLayout) {
  // bf16, H = 512, 8 units: 32 W_hh rows of 64 chunks (swizzled), 16
  // staged states likewise, and four depth slices of 32 x 16 fp32 sums.
  EXPECT_EQ(lstmRecurrenceSharedBytes(512, 8, 2, true),
            32 * 1024 + 16 * 1024 + 4 * 4 * 32 * 16);
  // H = 72: depth 80, 10 chunks a row padded to 11; 7 units' 28 rows
  // padded to 32.
  EXPECT_EQ(lstmRecurrenceSharedBytes(72, 7, 2, true),
            32 * 11 * 16 + 16 * 11 * 16 + 4 * 4 * 32 * 16);
  // H = 48: 6 chunks padded to 7.
  EXPECT_EQ(lstmRecurrenceSharedBytes(48, 8, 2, true),
            32 * 56 * 2 + 16 * 56 * 2 + 4 * 4 * 32 * 16);
  // f32 on chip: plain rows, 8 entries' fp32 states, one slice.
  EXPECT_EQ(lstmRecurrenceSharedBytes(48, 8, 4, true),
            32 * 48 * 4 + 4 * 8 * 48 + 4 * 32 * 8);
  // From L2: the states and sums alone.
  EXPECT_EQ(lstmRecurrenceSharedBytes(1024, 16, 4, false),
            4 * 8 * 1024 + 4 * 64 * 8);
}

TEST(LstmRecurrencePolicy, SpreadsUnitsOverTheSmsAndKeepsWeightsWhereTheyFit) {
  // 2 x 48 units, at least 8 a block.
  auto small = chooseLstmRecurrence(48, 2, 4, 232448, 132);
  ASSERT_TRUE(small);
  EXPECT_EQ(small->units, 8);
  EXPECT_EQ(small->blocks, 12);
  EXPECT_TRUE(small->weightsOnChip);
  // 2 x 1024 f32 units over 128 blocks of 16 would take 290 KiB of rows
  // and states each: W_hh is read each step, so one launch a step, 256
  // blocks of 8, each loading its 32 rows on chip once for every entry
  // (128 KiB of rows, 32 KiB of states, the sums). In bf16 the rows fit.
  auto wide = chooseLstmRecurrence(1024, 2, 4, 232448, 132);
  ASSERT_TRUE(wide);
  EXPECT_TRUE(wide->perStep);
  EXPECT_TRUE(wide->weightsOnChip);
  EXPECT_EQ(wide->units, 8);
  EXPECT_EQ(wide->blocks, 256);
  EXPECT_EQ(lstmRecurrenceSharedBytes(1024, 8, 4, true),
            32 * 1024 * 4 + 4 * 8 * 1024 + 4 * 32 * 8);
  EXPECT_NE(wide->reason.find("one launch a step"), std::string::npos);
  EXPECT_NE(wide->reason.find("296960 of 232448 bytes"), std::string::npos);
  EXPECT_NE(wide->reason.find("loads its W_hh rows into shared memory once "
                              "for every batch entry (164864 of 232448 "
                              "bytes)"),
            std::string::npos);
  // Where even 8 units' rows do not fit a step's block, they are read
  // from L2 each pass of 8 entries (f32 H = 2048: 256 KiB of rows).
  auto deep = chooseLstmRecurrence(2048, 1, 4, 232448, 132);
  ASSERT_TRUE(deep);
  EXPECT_TRUE(deep->perStep);
  EXPECT_FALSE(deep->weightsOnChip);
  EXPECT_NE(deep->reason.find("read from L2 each pass of 8 entries"),
            std::string::npos);
  auto narrow = chooseLstmRecurrence(1024, 2, 2, 232448, 132);
  EXPECT_TRUE(narrow->weightsOnChip);
  EXPECT_FALSE(narrow->perStep);
  // Off chip by request: the persistent grid reading W_hh from L2, never
  // more blocks than SMs (133 SMs and 2 x 4096 units).
  auto streamed =
      chooseLstmRecurrence(1024, 2, 4, 232448, 132, std::nullopt, false);
  ASSERT_TRUE(streamed);
  EXPECT_FALSE(streamed->perStep);
  EXPECT_EQ(streamed->blocks, 128);
  EXPECT_NE(streamed->reason.find("read from L2"), std::string::npos);
  auto odd = chooseLstmRecurrence(4096, 2, 2, 232448, 133, std::nullopt, false);
  ASSERT_TRUE(odd);
  EXPECT_LE(odd->blocks, 133);
  // Units forced: used as given, refused when the persistent grid would
  // not fit; a step a launch takes any number of blocks.
  EXPECT_EQ(chooseLstmRecurrence(256, 1, 2, 232448, 132, 64)->blocks, 4);
  EXPECT_FALSE(chooseLstmRecurrence(1024, 2, 2, 232448, 132, 1));
  auto single =
      chooseLstmRecurrence(1024, 2, 2, 232448, 132, 1, std::nullopt, true);
  ASSERT_TRUE(single);
  EXPECT_EQ(single->blocks, 2048);
  // Per step by request even where the rows fit, the reason saying so;
  // off chip too by request.
  auto asked = chooseLstmRecurrence(48, 2, 4, 232448, 132, std::nullopt,
                                    std::nullopt, true);
  ASSERT_TRUE(asked);
  EXPECT_TRUE(asked->perStep);
  EXPECT_TRUE(asked->weightsOnChip);
  EXPECT_NE(asked->reason.find("on request"), std::string::npos);
  auto streamedSteps =
      chooseLstmRecurrence(48, 2, 4, 232448, 132, std::nullopt, false, true);
  ASSERT_TRUE(streamedSteps);
  EXPECT_FALSE(streamedSteps->weightsOnChip);
  EXPECT_NE(streamedSteps->reason.find("read from L2 each pass"),
            std::string::npos);
  // On chip by request where the persistent grid's rows do not fit: one
  // launch a step; where even a step's do not: none.
  auto forced =
      chooseLstmRecurrence(1024, 2, 4, 232448, 132, std::nullopt, true);
  ASSERT_TRUE(forced);
  EXPECT_TRUE(forced->perStep && forced->weightsOnChip);
  EXPECT_FALSE(
      chooseLstmRecurrence(2048, 1, 4, 232448, 132, std::nullopt, true));
  EXPECT_FALSE(
      chooseLstmRecurrence(1024, 2, 4, 232448, 132, std::nullopt, true, false));
}

TEST(LstmRecurrencePolicy, Tf32TilesGiveWayToExactRowsThatKeepABetterPlan) {
  // f32 H = 1024 both ways: TF32's tiles fit one launch a step's 8 units
  // (200 KiB), the products then in TF32.
  auto tf32 = chooseLstmRecurrence(1024, 2, 4, 232448, 132, std::nullopt,
                                   std::nullopt, std::nullopt, 4, true);
  ASSERT_TRUE(tf32);
  EXPECT_TRUE(tf32->perStep && tf32->weightsOnChip && tf32->tf32);
  EXPECT_TRUE(lstmRecurrenceTf32(1024, 8, 4, true, 4, true, 232448));
  // f32 H = 1200, one direction: 10 units a block keep their exact fp32
  // rows on chip for all steps (231936 bytes) where TF32's tiles would not
  // (314368), nor 8 units' one launch a step (239360): the exact rows and
  // the persistent grid win, saying why.
  EXPECT_LE(lstmRecurrenceSharedBytes(1200, 10, 4, true), 232448);
  EXPECT_GT(lstmRecurrenceSharedBytes(1200, 10, 4, true, 4, true), 232448);
  EXPECT_GT(lstmRecurrenceSharedBytes(1200, 8, 4, true, 4, true), 232448);
  auto exact = chooseLstmRecurrence(1200, 1, 4, 232448, 132, std::nullopt,
                                    std::nullopt, std::nullopt, 4, true);
  ASSERT_TRUE(exact);
  EXPECT_FALSE(exact->perStep);
  EXPECT_TRUE(exact->weightsOnChip);
  EXPECT_FALSE(exact->tf32);
  EXPECT_EQ(exact->units, 10);
  EXPECT_NE(exact->reason.find("products exact fp32 (TF32's tiles would "
                               "not fit)"),
            std::string::npos);
  EXPECT_FALSE(lstmRecurrenceTf32(1200, 10, 4, true, 4, true, 232448));
  // Not allowed, 16-bit, or off chip: never TF32.
  EXPECT_FALSE(lstmRecurrenceTf32(1024, 8, 4, true, 4, false, 232448));
  EXPECT_FALSE(lstmRecurrenceTf32(64, 8, 2, true, 4, true, 232448));
  EXPECT_FALSE(lstmRecurrenceTf32(64, 8, 4, false, 4, true, 232448));
}

TEST(LstmRecurrencePolicy,
     BackwardKeepsColumnsOnChipWhereTheyFitAndSplitsSmallGradients) {
  // bf16 H = 512 on an H200: 8 units a block, W_hh's 8 columns (4H deep)
  // and the staged gate gradients fit; f32 H = 1024 both ways: they do not.
  auto fits = chooseLstmBackwardRecurrence(512, 1, 2, 232448, 132);
  ASSERT_TRUE(fits);
  EXPECT_TRUE(fits->weightsOnChip);
  EXPECT_EQ(fits->units, 8);
  EXPECT_LE(lstmBackwardSharedBytes(512, 8, 2, true), 232448);
  EXPECT_GT(lstmBackwardSharedBytes(1024, 16, 4, true), 232448);
  auto streamed = chooseLstmBackwardRecurrence(1024, 2, 4, 232448, 132);
  ASSERT_TRUE(streamed);
  EXPECT_FALSE(streamed->weightsOnChip);
  EXPECT_LE(streamed->blocks, 132);
  EXPECT_NE(streamed->reason.find("backwards"), std::string::npos);
  // Units that make more blocks than SMs: none.
  EXPECT_FALSE(chooseLstmBackwardRecurrence(1024, 2, 2, 232448, 132, 8));
  // The weight gradients: tiles enough for two waves need no split; a
  // small layer splits its rows up to 8 ranges.
  EXPECT_EQ(lstmGradientSplits(1024, 1024, 2, 132), 1);
  EXPECT_EQ(lstmGradientSplits(256, 256, 2, 132), 2);
  EXPECT_EQ(lstmGradientSplits(7, 5, 1, 132), 8);
}

} // namespace
