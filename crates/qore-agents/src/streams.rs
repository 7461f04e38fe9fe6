//! Whether an agent's answer streams, read from the shape of its request, never from a
//! wire's name or a path spelled here.
//!
//! Promises: the `[body]`'s literal `stream` decides when it has one; else, when the wire
//! says it in the path (its streamed and whole-answer chat paths differ, as Gemini's
//! `:streamGenerateContent` and `:generateContent` do) and the agent sets its endpoint, the
//! endpoint decides: it streams unless it holds the wire's own whole-answer tail; else it
//! streams. [`AgentRenderer::endpoint_decides_streaming`] is the one rule both this and
//! [`crate::request_overrides`] (which refuses `--no-stream` against such an endpoint) use.

use crate::render::AgentRenderer;

impl AgentRenderer {
    /// Whether the answer streams (see the module doc).
    pub fn streams(&self) -> bool {
        match self.agent.body.as_ref().and_then(|b| b.get("stream")) {
            Some(toml::Value::Boolean(stream)) => *stream,
            _ => match (&self.endpoint, self.path_tails()) {
                (Some(endpoint), Some((streamed, whole))) => {
                    endpoint.contains(&streamed) || !endpoint.contains(&whole)
                }
                _ => true,
            },
        }
    }

    /// Whether the agent's endpoint decides if the answer streams: it sets one, and its
    /// wire says streaming in the path rather than the body.
    pub fn endpoint_decides_streaming(&self) -> bool {
        self.endpoint.is_some() && self.path_tails().is_some()
    }

    /// Where the wire's streamed and whole-answer chat paths for this model part: their
    /// tails after the common start; `None` when the paths are the same.
    fn path_tails(&self) -> Option<(String, String)> {
        let streamed = self.protocol.chat_path(&self.model, true);
        let whole = self.protocol.chat_path(&self.model, false);
        let common = (streamed.char_indices())
            .zip(whole.chars())
            .find(|((_, a), b)| a != b)
            .map_or(streamed.len().min(whole.len()), |((at, _), _)| at);
        (streamed != whole).then(|| (streamed[common..].to_owned(), whole[common..].to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use crate::partials::Partials;
    use crate::profile::ProfileFile;
    use crate::render::AgentRenderer;
    use crate::Catalog;

    #[test]
    fn streaming_follows_the_body_then_the_endpoint_the_wire_reads() {
        let variant =
            |text: &str| ProfileFile::parse(std::path::Path::new("v.toml"), text).unwrap();
        let catalog = Catalog::with_user_files(vec![
            variant("name = \"whole\"\nextends = \"gemini-chat\"\nendpoint = \"/v1beta/models/${MODEL}:generateContent\"\n"),
            variant("name = \"keyed\"\nextends = \"gemini-chat\"\nendpoint = \"https://g.example/v1beta/models/${MODEL}:generateContent?key=k\"\n"),
            variant("name = \"quiet\"\nextends = \"openai-chat\"\n[body]\nstream = false\n"),
            variant("name = \"chat-path\"\nextends = \"openai-chat\"\nendpoint = \"/v1/x:generateContent\"\n"),
        ]);
        // (agent, wire, streams, the endpoint decides)
        let cases = [
            ("gemini-chat", "gemini", true, true),
            ("whole", "gemini", false, true),
            ("keyed", "gemini", false, true),
            ("openai-chat", "gemini", true, false),
            ("quiet", "openai-chat", false, false),
            // The wire says streaming in the body: the endpoint's words do not count.
            ("chat-path", "openai-chat", true, false),
        ];
        for (name, wire, streams, decides) in cases {
            let agent = catalog.get(name).unwrap();
            let protocol = qore_client::protocols::by_name(wire).unwrap();
            let renderer =
                AgentRenderer::new(agent, protocol, "m".into(), Partials::default()).unwrap();
            assert_eq!(renderer.streams(), streams, "{name}");
            assert_eq!(renderer.endpoint_decides_streaming(), decides, "{name}");
        }
    }
}
