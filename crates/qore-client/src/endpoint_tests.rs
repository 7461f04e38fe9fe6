//! The URL rule of [`super::join_endpoint`], and of [`super::join_under`] as a client calls it.

#[test]
fn endpoints_append_to_the_url_without_repeating_its_last_segments() {
    let cases = [
        // The vendors' documented URLs, from the seed's examples.
        ("https://api.openai.com/v1", "/chat/completions", "https://api.openai.com/v1/chat/completions"),
        ("https://api.anthropic.com", "/v1/messages", "https://api.anthropic.com/v1/messages"),
        ("https://generativelanguage.googleapis.com/v1beta", "/models/g:streamGenerateContent?alt=sse", "https://generativelanguage.googleapis.com/v1beta/models/g:streamGenerateContent?alt=sse"),
        ("https://api.mistral.ai", "/v1/chat/completions", "https://api.mistral.ai/v1/chat/completions"),
        // The same with the URL already ending in the version.
        ("https://api.mistral.ai/v1", "/v1/chat/completions", "https://api.mistral.ai/v1/chat/completions"),
        ("https://generativelanguage.googleapis.com/v1beta", "v1beta/models/g:generateContent", "https://generativelanguage.googleapis.com/v1beta/models/g:generateContent"),
        ("https://generativelanguage.googleapis.com", "v1beta/models/g:generateContent", "https://generativelanguage.googleapis.com/v1beta/models/g:generateContent"),
        // Plain appends, trailing slashes, dot segments, queries, full URLs.
        ("http://h:1/v1/", "chat/completions", "http://h:1/v1/chat/completions"),
        ("http://h:1/llama/v1", "../infill", "http://h:1/llama/v1/../infill"),
        ("http://h:1/api/v1", "/v1/x?a=/v1", "http://h:1/api/v1/x?a=/v1"),
        ("http://h:1/v1", "/v1", "http://h:1/v1/v1"),
        ("http://h:1/v1", "https://other/x", "https://other/x"),
        ("http://h:1", "/custom/chat", "http://h:1/custom/chat"),
    ];
    for (base, endpoint, want) in cases {
        assert_eq!(
            super::join_endpoint(base, endpoint),
            want,
            "{base} + {endpoint}"
        );
        // As a client joins: the base URL (untrimmed) parsed once when it is made.
        let path = reqwest::Url::parse(base).unwrap().path().to_owned();
        let joined = super::join_under(base, &path, endpoint);
        assert_eq!(joined, want, "client: {base} + {endpoint}");
    }
}
