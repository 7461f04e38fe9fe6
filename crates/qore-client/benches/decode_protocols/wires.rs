//! The streamed bodies: N text deltas of `"word "` in each provider's exact wire shape.
//!
//! Field sets are copied from real recordings under `/work/shared/fixtures/rig-cassettes/`
//! (`openai/chat_history_roundtrip_matrix/streaming_gpt_4_1_mini_*`,
//! `anthropic/streaming/streaming_smoke`, `gemini/streaming/streaming_smoke`,
//! `ollama/streaming/streaming_smoke`, `openai/responses_sessions/*_streaming`); the
//! recorder sorted the keys of some providers, so the order here is the one the providers
//! send (`type` first on Anthropic and the Responses API, `id` first on Chat Completions,
//! `candidates` first on Gemini). llama.cpp's `/completion` stream has no recording; its
//! shape is the local server's, as in `tests/llamacpp_loopback.rs`. Every body has its
//! wire's start events and ends with its terminal events, so each stream finishes cleanly
//! (stop reason: end of turn; output tokens: N).

use std::fmt::Write as _;

/// The text of every delta.
pub const PIECE: &str = "word ";

/// The text the N deltas fold into.
pub fn expected(n: usize) -> String {
    PIECE.repeat(n)
}

/// Chat Completions (`POST /v1/chat/completions`, `stream_options.include_usage`): a role
/// chunk, N content chunks, a `finish_reason` chunk, the usage chunk, `[DONE]`.
pub fn openai_chat(n: usize) -> String {
    const HEAD: &str = r#"{"id":"chatcmpl-BxQ7dK2mVn8ZpR4tLs9wYc3FhJ6e","object":"chat.completion.chunk","created":1753681083,"model":"gpt-4.1-mini-2025-04-14","service_tier":"default","system_fingerprint":"fp_6f2eabb9a5","#;
    // OpenAI pads each chunk with a random-length `obfuscation` string.
    const PAD: [&str; 4] = ["Lq", "9Xk2Tz", "a", "Vb7pQ1mZr"];
    let mut body = String::with_capacity(n * 290 + 2048);
    let mut frame = |tail: &str, i: usize| {
        body.push_str("data: ");
        body.push_str(HEAD);
        body.push_str(tail);
        let _ = write!(body, r#","obfuscation":"{}"}}"#, PAD[i % PAD.len()]);
        body.push_str("\n\n");
    };
    frame(
        r#""choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null"#,
        0,
    );
    for i in 0..n {
        frame(
            r#""choices":[{"index":0,"delta":{"content":"word "},"logprobs":null,"finish_reason":null}],"usage":null"#,
            i + 1,
        );
    }
    frame(
        r#""choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null"#,
        n + 1,
    );
    frame(
        &format!(
            r#""choices":[],"usage":{{"prompt_tokens":84,"completion_tokens":{n},"total_tokens":{},"prompt_tokens_details":{{"cached_tokens":0,"audio_tokens":0}},"completion_tokens_details":{{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}}"#,
            n + 84
        ),
        n + 2,
    );
    body.push_str("data: [DONE]\n\n");
    body
}

/// Anthropic Messages: `message_start`, `content_block_start`, `ping`, N
/// `content_block_delta`s, `content_block_stop`, `message_delta`, `message_stop`.
pub fn anthropic(n: usize) -> String {
    let mut body = String::with_capacity(n * 140 + 2048);
    let mut event = |name: &str, data: &str| {
        let _ = write!(body, "event: {name}\ndata: {data}\n\n");
    };
    event(
        "message_start",
        r#"{"type":"message_start","message":{"model":"claude-sonnet-4-6","id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","content":[],"stop_reason":null,"stop_sequence":null,"stop_details":null,"usage":{"input_tokens":33,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0},"output_tokens":4,"service_tier":"standard","inference_geo":"global"}}}"#,
    );
    event(
        "content_block_start",
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
    );
    event("ping", r#"{"type": "ping"}"#);
    for _ in 0..n {
        event(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"word "}}"#,
        );
    }
    event(
        "content_block_stop",
        r#"{"type":"content_block_stop","index":0}"#,
    );
    event(
        "message_delta",
        &format!(
            r#"{{"type":"message_delta","delta":{{"stop_reason":"end_turn","stop_sequence":null,"stop_details":null}},"usage":{{"input_tokens":33,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":{n}}}}}"#
        ),
    );
    event("message_stop", r#"{"type":"message_stop"}"#);
    body
}

/// Gemini `:streamGenerateContent?alt=sse`: one `GenerateContentResponse` per frame, CRLF
/// line ends, cumulative `usageMetadata` in every chunk; the last chunk is an empty text
/// part with the `thoughtSignature` and `finishReason: STOP` (as Gemini 3 ends a turn).
pub fn gemini(n: usize) -> String {
    const TAIL: &str =
        r#""modelVersion":"gemini-3-flash-preview","responseId":"lLmHaO3bN8S-1MkP7Ju3uAY"}"#;
    let mut body = String::with_capacity(n * 330 + 2048);
    let usage = |body: &mut String, candidates: usize| {
        let _ = write!(
            body,
            r#""usageMetadata":{{"promptTokenCount":26,"candidatesTokenCount":{candidates},"totalTokenCount":{},"promptTokensDetails":[{{"modality":"TEXT","tokenCount":26}}],"serviceTier":"standard"}},"#,
            26 + candidates
        );
    };
    for i in 0..n {
        body.push_str(
            r#"data: {"candidates":[{"content":{"parts":[{"text":"word "}],"role":"model"},"index":0}],"#,
        );
        usage(&mut body, i + 1);
        body.push_str(TAIL);
        body.push_str("\r\n\r\n");
    }
    body.push_str(
        r#"data: {"candidates":[{"content":{"parts":[{"text":"","thoughtSignature":"CiIBVKhc7oXh3nKpD6UY1hV0xqJf5mTsb3RkZ2Lw9aQeN4cBEl8KYAFUqFzu"}],"role":"model"},"finishReason":"STOP","index":0}],"#,
    );
    usage(&mut body, n);
    body.push_str(TAIL);
    body.push_str("\r\n\r\n");
    body
}

/// Ollama `/api/chat`, NDJSON: N lines with `created_at`, `message` and `done: false`, then
/// the `done: true` line with `done_reason` and the counters.
pub fn ollama(n: usize) -> String {
    let mut body = String::with_capacity(n * 130 + 1024);
    let created_at = |body: &mut String, i: usize| {
        // 12.5 ms per token from 06:38:03.222822.
        let us = 3_222_822 + i * 12_500;
        let (s, us) = (us / 1_000_000, us % 1_000_000);
        let _ = write!(
            body,
            r#""created_at":"2026-07-28T06:{:02}:{:02}.{us:06}Z","#,
            (38 + s / 60) % 60,
            s % 60
        );
    };
    for i in 0..n {
        body.push_str(r#"{"model":"qwen3:4b","#);
        created_at(&mut body, i);
        body.push_str(r#""message":{"role":"assistant","content":"word "},"done":false}"#);
        body.push('\n');
    }
    body.push_str(r#"{"model":"qwen3:4b","#);
    created_at(&mut body, n);
    let _ = writeln!(
        body,
        r#""message":{{"role":"assistant","content":""}},"done":true,"done_reason":"stop","total_duration":4852334875,"load_duration":55301250,"prompt_eval_count":39,"prompt_eval_duration":99508167,"eval_count":{n},"eval_duration":4388903630}}"#
    );
    body
}

/// llama.cpp `/completion` (and `/infill`) streamed: N `data:` chunks with `stop: false`,
/// then the `stop: true` chunk with the settings echoed, `stop_type` and `timings`.
pub fn llamacpp_fim(n: usize) -> String {
    let mut body = String::with_capacity(n * 140 + 2048);
    for i in 0..n {
        let _ = write!(
            body,
            "data: {{\"index\":0,\"content\":\"word \",\"tokens\":[{}],\"stop\":false,\"id_slot\":-1,\"tokens_predicted\":{},\"tokens_evaluated\":24}}\n\n",
            1_000 + i % 50_000,
            i + 1
        );
    }
    let _ = write!(
        body,
        "data: {}\n\n",
        format_args!(
            r#"{{"index":0,"content":"","tokens":[],"id_slot":0,"stop":true,"model":"qwen2.5-coder","tokens_predicted":{n},"tokens_evaluated":24,"generation_settings":{{"n_predict":-1,"seed":4294967295,"temperature":0.800000011920929,"top_k":40,"top_p":0.949999988079071,"min_p":0.05000000074505806,"stop":[],"samplers":["penalties","dry","top_k","typ_p","top_p","min_p","xtc","temperature"],"stream":true}},"prompt":"<|fim_prefix|>def add(a, b):\n    return <|fim_suffix|>\n<|fim_middle|>","has_new_line":false,"truncated":false,"stop_type":"eos","stopping_word":"","tokens_cached":{},"timings":{{"cache_n":20,"prompt_n":4,"prompt_ms":8.1,"prompt_per_token_ms":2.025,"prompt_per_second":493.8,"predicted_n":{n},"predicted_ms":30.2,"predicted_per_token_ms":0.1,"predicted_per_second":9000.0}}}}"#,
            n + 24
        )
    );
    body
}

/// OpenAI Responses (`POST /v1/responses`): `response.created`, `response.in_progress`,
/// `output_item.added`, `content_part.added`, N `output_text.delta`s, then
/// `output_text.done`, `content_part.done`, `output_item.done` and `response.completed`,
/// each of which repeats the whole text (as the API does).
pub fn openai_responses(n: usize) -> String {
    let text = expected(n);
    let mut body = String::with_capacity(n * 230 + 4 * text.len() + 8192);
    let mut seq = 0usize;
    let mut event = |body: &mut String, kind: &str, fields: std::fmt::Arguments<'_>| {
        let _ = write!(
            body,
            "event: {kind}\ndata: {{\"type\":\"{kind}\",\"sequence_number\":{seq},{fields}}}\n\n"
        );
        seq += 1;
    };
    let response = |status: &str, output: &str, usage: &str| {
        format!(
            r#""response":{{"id":"resp_68879e8d3f7c8190a6c2b7a4e1d0f5b2","object":"response","created_at":1753718413,"status":"{status}","background":false,"error":null,"incomplete_details":null,"instructions":"You are a concise assistant. Answer directly in plain text.","max_output_tokens":null,"max_tool_calls":null,"model":"gpt-4o-2024-08-06","output":[{output}],"parallel_tool_calls":true,"previous_response_id":null,"prompt_cache_key":null,"reasoning":{{"effort":null,"summary":null}},"safety_identifier":null,"service_tier":"default","store":true,"temperature":1.0,"text":{{"format":{{"type":"text"}},"verbosity":"medium"}},"tool_choice":"auto","tools":[],"top_logprobs":0,"top_p":1.0,"truncation":"disabled","usage":{usage},"user":null,"metadata":{{}}}}"#
        )
    };
    const ITEM: &str = "msg_68879e8e1a5c8190b3d4f6a7c8e9d0a1";
    let message = |status: &str, content: &str| {
        format!(
            r#"{{"id":"{ITEM}","type":"message","status":"{status}","content":[{content}],"role":"assistant"}}"#
        )
    };
    let part = |text: &str| {
        format!(r#"{{"type":"output_text","annotations":[],"logprobs":[],"text":"{text}"}}"#)
    };
    event(
        &mut body,
        "response.created",
        format_args!("{}", response("in_progress", "", "null")),
    );
    event(
        &mut body,
        "response.in_progress",
        format_args!("{}", response("in_progress", "", "null")),
    );
    event(
        &mut body,
        "response.output_item.added",
        format_args!(r#""output_index":0,"item":{}"#, message("in_progress", "")),
    );
    event(
        &mut body,
        "response.content_part.added",
        format_args!(
            r#""item_id":"{ITEM}","output_index":0,"content_index":0,"part":{}"#,
            part("")
        ),
    );
    const PAD: [&str; 4] = ["Lq", "9Xk2Tz", "a", "Vb7pQ1mZr"];
    for i in 0..n {
        event(
            &mut body,
            "response.output_text.delta",
            format_args!(
                r#""item_id":"{ITEM}","output_index":0,"content_index":0,"delta":"word ","logprobs":[],"obfuscation":"{}""#,
                PAD[i % PAD.len()]
            ),
        );
    }
    event(
        &mut body,
        "response.output_text.done",
        format_args!(
            r#""item_id":"{ITEM}","output_index":0,"content_index":0,"text":"{text}","logprobs":[]"#
        ),
    );
    event(
        &mut body,
        "response.content_part.done",
        format_args!(
            r#""item_id":"{ITEM}","output_index":0,"content_index":0,"part":{}"#,
            part(&text)
        ),
    );
    let done = message("completed", &part(&text));
    event(
        &mut body,
        "response.output_item.done",
        format_args!(r#""output_index":0,"item":{done}"#),
    );
    let usage = format!(
        r#"{{"input_tokens":224,"input_tokens_details":{{"cached_tokens":0}},"output_tokens":{n},"output_tokens_details":{{"reasoning_tokens":0}},"total_tokens":{}}}"#,
        n + 224
    );
    event(
        &mut body,
        "response.completed",
        format_args!("{}", response("completed", &done, &usage)),
    );
    body
}
