"""One entry of samples per registered format (issue 18): the facts tests need, in one place.

Each entry holds every key of :data:`KEYS` (``tests/test_formats.py`` names a missing one):

- ``opener``: the text that starts a call block (or a call, for formats without a block);
- ``empty_envelope``: texts of an envelope or a call that holds nothing a call needs (markup,
  never content: issue 18 (8)), or ``None`` where the format has no envelope of its own;
- ``broken``: a call the model left broken (its markup stops being a call), with no end.

Behaviour flags (``layout_before_call``, ...) are parser class attributes, not entries here.
"""

from __future__ import annotations

from callscale.parsers import dsml

KEYS = ("opener", "empty_envelope", "broken")


def _dsml(name: str) -> dict:
    sp = dsml.SPELLINGS[name]
    return {
        "opener": f"<{sp.block}>",
        "empty_envelope": [f"<{sp.block}>\n</{sp.block}>", f"<{sp.block}>\n<{sp.invoke}>\n</{sp.invoke}>\n</{sp.block}>",
                           f'<{sp.block}>\n<{sp.invoke} name="">\n</{sp.invoke}>\n</{sp.block}>'],
        "broken": f'Hi.\n\n<{sp.block}>\n<{sp.invoke} name="get_weather">\n',
    }


FORMATS: dict[str, dict] = {
    "glm45": {"opener": "<tool_call>", "empty_envelope": ["<tool_call></tool_call>", "<tool_call>\n</tool_call>"],
              "broken": "Hi.\n<tool_call>get_weather\n<arg_key>city</arg_key>\n"},
    "glm47": {"opener": "<tool_call>", "empty_envelope": ["<tool_call></tool_call>"],
              "broken": "Hi.<tool_call>get_weather<arg_key>city</arg_key>"},
    **{name: _dsml(name) for name in dsml.SPELLINGS},
    "qwen3_coder": {"opener": "<tool_call>", "empty_envelope": None,
                    "broken": "Hi.\n<tool_call>\n<function=get_weather>\n"},
    "minimax_m2": {"opener": "<minimax:tool_call>", "empty_envelope": None,
                   "broken": 'Hi.\n<minimax:tool_call>\n<invoke name="get_weather">\n'},
    # issue 16: the tools element and a call without a tool are markup (kimi_k3.py); an M3 block that
    # starts no call is content, as in M2 (minimax_m3.py)
    "kimi_k3": {"opener": "<|open|>tools<|sep|>",
                "empty_envelope": ["<|open|>tools<|sep|><|close|>tools<|sep|>",
                                   "<|open|>tools<|sep|><|open|>call<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
                                   '<|open|>tools<|sep|><|open|>call tool=""<|sep|><|close|>call<|sep|><|close|>tools<|sep|>'],
                "broken": 'Hi.<|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool="get_weather" index="1"<|sep|>'},
    "minimax_m3": {"opener": "]<]minimax[>[<tool_call>", "empty_envelope": None,
                   "broken": 'Hi.\n]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name="get_weather">\n'},
    "gemma4": {"opener": "<|tool_call>", "empty_envelope": None,
               "broken": "Hi.<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>,days:3}"},
    # the JSON formats (issue 18's i18a)
    "deepseek_v3": {"opener": "<｜tool▁calls▁begin｜>",
                    "empty_envelope": ["<｜tool▁calls▁begin｜><｜tool▁calls▁end｜>",
                                       "<｜tool▁calls▁begin｜>\n<｜tool▁calls▁end｜>",
                                       "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜><｜tool▁call▁end｜><｜tool▁calls▁end｜>",
                                       "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜><｜tool▁call▁end｜>"
                                       "<｜tool▁calls▁end｜>"],
                    "broken": 'Hi.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n'
                              '```json\n{"city": Paris'},
    "deepseek_v31": {"opener": "<｜tool▁calls▁begin｜>",
                     "empty_envelope": ["<｜tool▁calls▁begin｜><｜tool▁calls▁end｜>",
                                        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜><｜tool▁call▁end｜><｜tool▁calls▁end｜>",
                                        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜><｜tool▁sep｜>{}<｜tool▁call▁end｜>"
                                        "<｜tool▁calls▁end｜>"],
                     "broken": 'Hi.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": Paris'},
    "kimi_k2": {"opener": "<|tool_calls_section_begin|>",
                "empty_envelope": ["<|tool_calls_section_begin|><|tool_calls_section_end|>",
                                   "<|tool_calls_section_begin|><|tool_call_begin|><|tool_call_end|><|tool_calls_section_end|>",
                                   "<|tool_calls_section_begin|><|tool_call_begin|><|tool_call_argument_begin|>"
                                   "<|tool_call_end|><|tool_calls_section_end|>"],
                "broken": 'Hi.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0'
                          '<|tool_call_argument_begin|>{"city": Paris'},
    "qwen3": {"opener": "<tool_call>",
              "empty_envelope": ["<tool_call></tool_call>", "<tool_call>\n</tool_call>", "<tool_call>\n{}\n</tool_call>"],
              "broken": 'Hi.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": Paris'},
    "mistral": {"opener": "[TOOL_CALLS]", "empty_envelope": ["[TOOL_CALLS][ARGS]", "[TOOL_CALLS][]"],
                "broken": 'Hi.[TOOL_CALLS]get_weather[ARGS]{"city": Paris'},
    "gpt_oss": {"opener": "<|channel|>commentary to=functions.",
                "empty_envelope": ["<|start|>assistant<|channel|>commentary to=functions.get_weather<|call|>",
                                   "<|start|>assistant<|end|>", "<|start|>assistant<|channel|>final<|message|><|return|>"],
                "broken": 'Hi.<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json'
                          '<|message|>{"city": Paris'},
    "llama3_json": {"opener": '{"name": ', "empty_envelope": ["<|python_tag|>"],
                    "broken": 'Hi.{"name": "get_weather", "parameters": {"city": Paris'},
    "llama4_pythonic": {"opener": "[", "empty_envelope": ["<|python_start|><|python_end|>"],
                        "broken": 'Hi.[get_weather(city="Paris", days='},
}
