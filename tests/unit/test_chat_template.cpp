// The chat-template facade the CLI and a server call: what it passes to the template (messages,
// add_generation_prompt, the special tokens only when given, extra variables, the date) and the
// errors it gives, on templates written here (the shipped ones are in golden/).
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "chat/chat_template.h"
#include "support/errors.h"

namespace eagle2 {
namespace {

using nlohmann::ordered_json;

ChatTemplateInputs conversation() {
  ChatTemplateInputs in;
  in.messages = ordered_json::parse(
      R"([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Yo"}])");
  in.today.year = 2026, in.today.month = 11, in.today.day = 30;
  return in;
}

const char* const kTemplate =
    "{{ bos_token }}{% for m in messages %}<{{ m.role }}>{{ m.content }}{{ eos_token }}{% endfor %}"
    "{% if add_generation_prompt %}<assistant>{% endif %}";

TEST(ChatTemplate, RendersTheConversation) {
  ChatTemplateInputs in = conversation();
  in.bos_token = "<s>";
  in.eos_token = "</s>";
  const ChatTemplate t(kTemplate, "mini.jinja");
  EXPECT_EQ(t.render(in), "<s><user>Hi</s><assistant>Yo</s>");
  in.add_generation_prompt = true;
  EXPECT_EQ(t.render(in), "<s><user>Hi</s><assistant>Yo</s><assistant>");
}

TEST(ChatTemplate, AbsentTokensAreUndefined) {
  const ChatTemplate t(
      "{{ bos_token is defined }}|{{ eos_token }}|{{ bos_token | default('none given') }}");
  EXPECT_EQ(t.render(conversation()), "false||none given");
  ChatTemplateInputs in = conversation();
  in.bos_token = "";
  EXPECT_EQ(t.render(in), "true||");
}

TEST(ChatTemplate, ExtraVariablesKeepTheirKeyOrder) {
  ChatTemplateInputs in = conversation();
  in.extra = ordered_json::parse(
      R"({"tools": [{"name": "f", "description": "d", "a": 1}], "enable_thinking": false})");
  const ChatTemplate t("{{ tools | tojson }} {{ enable_thinking }}");
  EXPECT_EQ(t.render(in), R"([{"name": "f", "description": "d", "a": 1}] false)");
}

TEST(ChatTemplate, StrftimeNowFormatsTheGivenDate) {
  const ChatTemplate t("{{ strftime_now('%d %b %Y') }}", "dated.jinja");
  EXPECT_EQ(t.render(conversation()), "30 Nov 2026");
  ChatTemplateInputs undated = conversation();
  undated.today = {};
  EXPECT_EQ(test::error_of([&] { t.render(undated); }),
            "dated.jinja:1: strftime_now(): the renderer was given no current date");
  const jinja::Date now = local_date_now();
  EXPECT_GE(now.year, 2024);
  EXPECT_GE(now.month, 1);
  EXPECT_LE(now.month, 12);
}

TEST(ChatTemplate, ClearErrors) {
  const ChatTemplate t(kTemplate, "mini.jinja");
  ChatTemplateInputs in = conversation();
  in.messages = ordered_json::object();
  EXPECT_EQ(test::error_of([&] { t.render(in); }), "mini.jinja: the messages must be a JSON array");
  in = conversation();
  in.extra = {{"messages", 1}};
  EXPECT_EQ(test::error_of([&] { t.render(in); }),
            "mini.jinja: the extra variables may not set 'messages' (it has its own input)");
  EXPECT_EQ(test::error_of([&] { ChatTemplate("{% if %}", "bad.jinja"); }),
            "bad.jinja:1: syntax error: expected an expression, found '%}'");
  const ChatTemplate strict(
      "{% if messages[0].role != 'system' %}{{ raise_exception('A system message comes first') "
      "}}{% endif %}",
      "strict.jinja");
  EXPECT_EQ(test::error_of([&] { strict.render(conversation()); }),
            "strict.jinja:1: raise_exception: A system message comes first");
}

TEST(ChatTemplate, OneTemplateRendersOnManyThreads) {
  ChatTemplateInputs in = conversation();
  in.bos_token = "<s>";
  const ChatTemplate t(kTemplate);
  const std::string want = t.render(in);
  std::vector<std::string> got(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < got.size(); ++i)
    threads.emplace_back([&, i] {
      for (int k = 0; k < 50; ++k) got[i] = t.render(in);
    });
  for (auto& th : threads) th.join();
  for (const auto& g : got) EXPECT_EQ(g, want);
}

}  // namespace
}  // namespace eagle2
