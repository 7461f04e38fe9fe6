//! `POST /v1/completions` (OpenAI's legacy completions with `prompt` and `suffix`): code
//! completion through the agent's fill-in-the-middle body.
