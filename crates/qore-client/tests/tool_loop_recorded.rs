//! The tool loop against recorded multi-exchange tool sessions (`rig-cassettes`, see
//! `/work/shared/fixtures/README.md`), at least one per protocol, with each codec's own
//! encoder writing the requests (the checks are in `tool_loop/recorded.rs`).

#[path = "tool_loop/recorded.rs"]
mod recorded;
#[path = "tool_loop/support.rs"]
mod support;

use recorded::replay_session;
use support::Wire;

fn codec(wire: Wire, server: &qore_testkit::ReplayServer, _model: &str) -> qore_client::Client {
    wire.client(server)
}

#[tokio::test]
async fn anthropic_sessions() {
    for name in [
        "anthropic/messages_sessions/sequential_tool_calls_streaming",
        "anthropic/reasoning_tool_roundtrip/streaming",
        "anthropic/multi_turn_streaming/multi_turn_streaming_tools",
        "anthropic/prompt_caching/conformance_agent_loop",
    ] {
        replay_session(Wire::Anthropic, name, &codec).await;
    }
}

#[tokio::test]
async fn openai_chat_sessions() {
    for name in [
        "openai/completions_api/completions_api_streams_two_tool_calls_before_final_answer",
        "openai/raw_capture_agent_matrix/chat_streamed_tool_run_records_distinct_raw",
        "openai/prompt_caching/chat_completions_agent_loop",
    ] {
        replay_session(Wire::OpenAiChat, name, &codec).await;
    }
}

#[tokio::test]
async fn openai_responses_sessions() {
    for name in [
        "openai/responses_sessions/sequential_tool_calls_streaming",
        "openai/responses_sessions/reasoning_session_two_tool_calls_streaming",
        "openai/responses_sessions/sequential_tool_calls_nonstreaming",
        "chatgpt/codex_sessions/sequential_tool_calls_streaming",
    ] {
        replay_session(Wire::Responses, name, &codec).await;
    }
}

#[tokio::test]
async fn gemini_sessions() {
    for name in [
        "gemini/multi_turn_streaming/manual_multi_turn_streaming_loop",
        "gemini/streaming_tools/streaming_tools_surface_two_distinct_tool_calls_before_final_answer",
        "gemini/prompt_caching/agent_loop",
    ] {
        replay_session(Wire::Gemini, name, &codec).await;
    }
}

#[tokio::test]
async fn ollama_sessions() {
    for name in [
        "ollama/streaming_tools/streaming_tools_smoke",
        "ollama/reasoning_tool_roundtrip/streaming",
    ] {
        replay_session(Wire::Ollama, name, &codec).await;
    }
}

#[tokio::test]
async fn llamacpp_sessions() {
    for name in [
        "llamacpp/streaming_tools/streaming_tools_surface_two_distinct_tool_calls_before_final_answer",
        "llamacpp/tools/tools_roundtrip",
    ] {
        replay_session(Wire::LlamaCpp, name, &codec).await;
    }
}

#[tokio::test]
async fn mistral_sessions() {
    for name in [
        "mistral/agent_tool_sessions/sequential_complex_tool_calls_streaming",
        "mistral/agent_tool_sessions/parallel_tool_calls_single_turn_streaming",
    ] {
        replay_session(Wire::Mistral, name, &codec).await;
    }
}
