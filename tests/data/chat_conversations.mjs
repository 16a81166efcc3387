// Conversations that exercise what golden/chat_templates.json does not: a conversation ending on
// the assistant, tool definitions and calls (arguments as an object and as a JSON string), tool
// results, quotes and backslashes, text that looks like Jinja, Unicode (astral characters, and
// white space that only JavaScript's trim removes), an empty system message, thinking content.
const tools = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "Get the current weather in a city",
      parameters: {
        type: "object",
        properties: {
          city: { type: "string", description: "The city" },
          unit: { type: "string", enum: ["celsius", "fahrenheit"] },
        },
        required: ["city"],
      },
    },
  },
];

export const CONVERSATIONS = [
  {
    id: "ends_on_assistant",
    messages: [
      { role: "user", content: "Name a prime." },
      { role: "assistant", content: "7" },
      { role: "user", content: "And one above 100?" },
      { role: "assistant", content: "101 is prime." },
    ],
  },
  {
    id: "quotes_and_markup",
    messages: [
      { role: "system", content: "Answer in JSON: {\"key\": 'value'} and keep \\backslashes\\." },
      { role: "user", content: "Is {{ this }} or {% this %} a template? <b>bold</b>\n\ttabbed\r\nline" },
    ],
  },
  {
    id: "unicode",
    messages: [
      { role: "user", content: "\u00a0\u3000 Grüße, 世界! 😀 مرحبا e\u0301 \u2028" },
      { role: "assistant", content: "\ufeffΓειά σου 👋🏽\u00a0" },
      { role: "user", content: "Ünïcödé ÉCOLE ß İ" },
    ],
  },
  {
    id: "empty_system",
    messages: [
      { role: "system", content: "" },
      { role: "user", content: "Hi" },
    ],
  },
  {
    id: "tool_call_object_arguments",
    extra: { tools },
    messages: [
      { role: "user", content: "What's the weather in Paris?" },
      {
        role: "assistant",
        content: "",
        tool_calls: [
          { id: "call12345", type: "function", function: { name: "get_weather", arguments: { city: "Paris", unit: "celsius" } } },
        ],
      },
      { role: "tool", tool_call_id: "call12345", content: "{\"temperature\": 18, \"sky\": \"clear\"}" },
      { role: "assistant", content: "It is 18 °C and clear in Paris." },
    ],
  },
  {
    id: "tool_call_string_arguments",
    messages: [
      { role: "system", content: "You can call tools." },
      { role: "user", content: "Weather in Oslo and Rome?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "callAAAAA", type: "function", function: { name: "get_weather", arguments: "{\"city\": \"Oslo\"}" } },
        ],
      },
      { role: "tool", tool_call_id: "callAAAAA", content: "-3 C" },
      { role: "user", content: "Thanks" },
    ],
  },
  {
    id: "thinking",
    extra: { enable_thinking: false },
    messages: [
      { role: "system", content: "Be brief. /no_think" },
      { role: "user", content: "2+2?" },
      { role: "assistant", content: "<think>\nSimple sum.\n</think>\n\n4" },
      { role: "user", content: "3+3?" },
    ],
  },
];
