// callscale's llama.cpp harness: llama-server's per-token tool-call parsing, with no model.
//
// What llama-server does for each streamed token (tools/server/server-task.cpp,
// task_result_state::update_chat_msg, filter_tool_calls=false as the server calls it):
//   generated_text += text_added;
//   new_msg = common_chat_parse(generated_text, is_partial, chat_parser_params);
//   if (!new_msg.empty()) { new_msg.set_tool_call_ids(...); diffs = compute_diffs(chat_msg, new_msg); chat_msg = new_msg; }
// and how it gets chat_parser_params for a request (tools/server/server-common.cpp and
// server-schema.cpp): common_chat_templates_apply(template, {messages, tools, ...}) gives the
// format, the generation prompt and the serialised PEG parser, loaded with parser.load().
//
// This file does the same through llama.cpp's own `common` library, as a C interface for
// ctypes (callscale/adapters/llamacpp.py). Only the update (append, parse, ids, diffs) runs
// between the callgrind toggles; turning the diffs into JSON for Python does not.
//
// Interface (every string UTF-8; a returned `const char *` stays valid until the next call on
// the same object):
//   callscale_llamacpp_params_new(template_source, tools_json, reasoning_format, enable_thinking) -> params
//   callscale_llamacpp_params_info(params) -> JSON {"format", "generation_prompt", "parser_bytes", "callgrind"}
//                                             or {"error": message} when params_new failed
//   callscale_llamacpp_params_free(params)
//   callscale_llamacpp_stream_new(params) -> stream (params must outlive it)
//   callscale_llamacpp_feed(stream, text, length, is_partial) -> JSON list of diffs
//       [[reasoning_delta, content_delta, tool_index (-1: none), name, arguments_delta], ...]
//       or {"error": message} when llama.cpp threw (as in the server, the text stays appended)
//   callscale_llamacpp_stream_free(stream)
//   callscale_llamacpp_counting(on): while on, each feed's update runs between two
//       CALLGRIND_TOGGLE_COLLECT client requests (no-ops outside valgrind).
#include "chat.h"

#include <nlohmann/json.hpp>
#if __has_include(<valgrind/callgrind.h>)
#    include <valgrind/callgrind.h>
#    define CALLSCALE_CALLGRIND 1
#else  // without valgrind's headers the instruction meter counts nothing of the harness (params_info says so)
#    define CALLGRIND_TOGGLE_COLLECT
#    define CALLSCALE_CALLGRIND 0
#endif

#include <exception>
#include <memory>
#include <string>
#include <vector>

using json = nlohmann::ordered_json;

namespace {

struct params_t {
    common_chat_parser_params parser_params;
    std::string               format;
    std::string               error;
    std::string               info;
    size_t                    parser_bytes = 0;
};

struct stream_t {
    const params_t *                  params;
    std::string                       generated_text;
    common_chat_msg                   chat_msg;
    std::vector<std::string>          generated_tool_call_ids;
    size_t                            next_id = 0;
    std::string                       answer;
};

bool counting = false;

std::string error_json(const std::string & message) {
    return json{{"error", message}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

extern "C" {

void * callscale_llamacpp_params_new(const char * template_source, const char * tools_json,
                                     const char * reasoning_format, int enable_thinking) {
    auto * p = new params_t();
    try {
        auto tmpls = common_chat_templates_init(/* model */ nullptr, template_source);
        common_chat_templates_inputs inputs;
        common_chat_msg user;
        user.role    = "user";
        user.content = "Call the tools.";
        inputs.messages.push_back(user);
        inputs.tools               = common_chat_tools_parse_oaicompat(common_json::parse(tools_json));
        inputs.tool_choice         = COMMON_CHAT_TOOL_CHOICE_AUTO;
        inputs.parallel_tool_calls = true;
        inputs.reasoning_format    = common_reasoning_format_from_name(reasoning_format);
        inputs.enable_thinking     = enable_thinking != 0;
        inputs.add_generation_prompt = true;
        common_chat_params chat_params = common_chat_templates_apply(tmpls.get(), inputs);
        // as the server sets a request's parser parameters (server-schema.cpp)
        p->parser_params                      = common_chat_parser_params(chat_params);
        p->parser_params.reasoning_format     = inputs.reasoning_format;
        p->parser_params.reasoning_in_content = false;  // stream && DEEPSEEK_LEGACY: not the default
        p->parser_params.parse_tool_calls     = true;
        if (!chat_params.parser.empty()) {
            p->parser_params.parser.load(chat_params.parser);
        }
        p->format       = common_chat_format_name(chat_params.format);
        p->parser_bytes = chat_params.parser.size();
        p->info = json{{"format", p->format}, {"generation_prompt", chat_params.generation_prompt},
                       {"parser_bytes", p->parser_bytes},
                       {"callgrind", CALLSCALE_CALLGRIND != 0}}
                      .dump(-1, ' ', false, json::error_handler_t::replace);
    } catch (const std::exception & e) {
        p->error = e.what();
        p->info  = error_json(p->error);
    }
    return p;
}

const char * callscale_llamacpp_params_info(void * params) {
    return static_cast<params_t *>(params)->info.c_str();
}

void callscale_llamacpp_params_free(void * params) {
    delete static_cast<params_t *>(params);
}

void * callscale_llamacpp_stream_new(void * params) {
    auto * s   = new stream_t();
    s->params  = static_cast<params_t *>(params);
    return s;
}

void callscale_llamacpp_stream_free(void * stream) {
    delete static_cast<stream_t *>(stream);
}

void callscale_llamacpp_counting(int on) {
    counting = on != 0;
}

// The server's update_chat_msg (filter_tool_calls=false), then the diffs as JSON.
const char * callscale_llamacpp_feed(void * stream, const char * text, size_t length, int is_partial) {
    auto * s = static_cast<stream_t *>(stream);
    std::vector<common_chat_msg_diff> diffs;
    std::string error;
    const bool count = counting;
    if (count) {
        CALLGRIND_TOGGLE_COLLECT;
    }
    try {
        s->generated_text.append(text, length);
        auto msg_prv_copy = s->chat_msg;
        auto new_msg = common_chat_parse(s->generated_text, is_partial != 0, s->params->parser_params);
        if (!new_msg.empty()) {
            new_msg.set_tool_call_ids(s->generated_tool_call_ids,
                                      [s]() { return "call_" + std::to_string(s->next_id++); });
            s->chat_msg = new_msg;
            diffs = common_chat_msg_diff::compute_diffs(msg_prv_copy, s->chat_msg);
        }
    } catch (const std::exception & e) {
        error = e.what();
    }
    if (count) {
        CALLGRIND_TOGGLE_COLLECT;
    }
    if (!error.empty()) {  // the server fails the request; the text stays appended, as there
        s->answer = error_json(error);
        return s->answer.c_str();
    }
    json out = json::array();
    for (const auto & d : diffs) {
        const bool call = d.tool_call_index != std::string::npos;
        out.push_back(json::array({d.reasoning_content_delta, d.content_delta,
                                   call ? static_cast<long long>(d.tool_call_index) : -1LL,
                                   d.tool_call_delta.name, d.tool_call_delta.arguments}));
    }
    s->answer = out.dump(-1, ' ', false, json::error_handler_t::replace);
    return s->answer.c_str();
}

}  // extern "C"
