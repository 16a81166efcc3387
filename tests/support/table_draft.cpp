#include "support/table_draft.h"

#include <gtest/gtest.h>

namespace eagle2::test {

TableDraft::TableDraft(ChildTable table)
    : children([table = std::move(table)](const std::vector<int32_t>& path) {
        auto it = table.find(path);
        if (it == table.end()) {
          ADD_FAILURE() << "no scripted children for a path of length " << path.size();
          return std::vector<std::pair<int32_t, float>>{};
        }
        return it->second;
      }) {}

void TableDraft::answer(const DraftStep& step, const std::vector<FedNode>& fed) {
  steps.push_back(step);
  const size_t k = static_cast<size_t>(step.k);
  tokens_.assign(step.rows * k, 0);
  logp_.assign(step.rows * k, 0.0f);
  confidence_.clear();
  std::vector<int32_t> fed_tokens;
  for (size_t row = 0; row < step.rows; ++row) {
    std::vector<int32_t> path;  // tokens from the root (excluded) to the node
    if (step.kind == DraftStep::Kind::Expand) {
      const size_t i = step.first + row;
      for (int32_t f = static_cast<int32_t>(i); f >= 0; f = fed[f].parent_fed)
        path.insert(path.begin(), fed[f].token);
      EXPECT_EQ(static_cast<size_t>(fed[i].depth), path.size()) << "depth of fed node " << i;
      fed_tokens.push_back(fed[i].token);
    }
    const auto row_children = children(path);
    EXPECT_GE(row_children.size(), k) << "too few scripted children";
    for (size_t c = 0; c < k && c < row_children.size(); ++c)
      std::tie(tokens_[row * k + c], logp_[row * k + c]) = row_children[c];
  }
  if (step.kind == DraftStep::Kind::Expand) fed_steps.push_back(fed_tokens);
  if (confidence)
    for (size_t i = 0; i < logp_.size(); ++i)
      confidence_.push_back(confidence(logp_[i], static_cast<int>(i % k)));
}

void TableDraft::build(DynamicTreeBuilder& builder, int32_t root, const DynamicTreeParams& params,
                       int64_t max_tokens, DraftTree& tree) {
  builder.start(root, params, max_tokens,
                choose ? DynamicTreeBuilder::Budget::Chosen : DynamicTreeBuilder::Budget::Fixed);
  for (DraftStep step; (step = builder.next()).kind != DraftStep::Kind::Done;) {
    if (step.kind == DraftStep::Kind::ChooseBudget) {
      steps.push_back(step);
      ASSERT_TRUE(choose) << "a budget asked for with a fixed budget";
      builder.choose_budget(choose(builder.values_desc(), max_tokens));
      continue;
    }
    if (step.kind == DraftStep::Kind::Expand && expand) {
      if (!expand(builder.pool_values(), builder.frontier_values())) {
        builder.stop_expanding();
        continue;
      }
    }
    answer(step, builder.fed());
    builder.supply(tokens_, logp_, confidence_);
  }
  builder.finish(tree);
}

void TableDraft::build(StaticTreeBuilder& builder, int32_t root, const TreeChoices& choices,
                       int64_t max_tokens, DraftTree& tree) {
  builder.start(root, choices, max_tokens);
  for (DraftStep step; (step = builder.next()).kind != DraftStep::Kind::Done;) {
    ASSERT_NE(step.kind, DraftStep::Kind::ChooseBudget) << "a static tree asked for a budget";
    answer(step, builder.fed());
    builder.supply(tokens_, logp_);
  }
  builder.finish(tree);
}

DraftTree dynamic_tree_of(TableDraft& draft, const DynamicTreeParams& params, int64_t max_tokens) {
  DynamicTreeBuilder builder;
  DraftTree tree;
  draft.build(builder, 1, params, max_tokens, tree);
  return tree;
}

}  // namespace eagle2::test
