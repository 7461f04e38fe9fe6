//! Frame reading, one table: what a byte stream yields frame by frame.

use super::{encode, read_frame};
use crate::error::FrameError;

/// What one `read_frame` call gives, written short.
#[derive(Debug, PartialEq)]
enum Got {
    Body(&'static str),
    End,
    Header,
    Truncated,
    TooLarge,
}

async fn read_all(input: &[u8]) -> Vec<Got> {
    let mut reader = tokio::io::BufReader::new(input);
    let mut out = Vec::new();
    loop {
        let got = match read_frame(&mut reader).await {
            Ok(Some(body)) => Got::Body(String::from_utf8(body).unwrap().leak()),
            Ok(None) => Got::End,
            Err(FrameError::Header(_)) => Got::Header,
            Err(FrameError::Truncated) => Got::Truncated,
            Err(FrameError::TooLarge(_)) => Got::TooLarge,
            Err(FrameError::Io(err)) => panic!("{err}"),
        };
        let stop = !matches!(got, Got::Body(_) | Got::Header);
        out.push(got);
        if stop {
            return out;
        }
    }
}

#[tokio::test]
async fn frames_are_read_in_step() {
    let cases: Vec<(&str, Vec<u8>, Vec<Got>)> = vec![
        ("nothing", b"".to_vec(), vec![Got::End]),
        (
            "two frames",
            [encode(b"{}"), encode(b"[1]")].concat(),
            vec![Got::Body("{}"), Got::Body("[1]"), Got::End],
        ),
        (
            "other headers, any case",
            b"content-length: 2\r\nContent-Type: x\r\n\r\nab".to_vec(),
            vec![Got::Body("ab"), Got::End],
        ),
        (
            "a body that is not JSON is still a frame",
            [encode(b"not json"), encode(b"{}")].concat(),
            vec![Got::Body("not json"), Got::Body("{}"), Got::End],
        ),
        (
            "a header block without a length, then a good frame",
            [b"X-Foo: 1\r\n\r\n".to_vec(), encode(b"{}")].concat(),
            vec![Got::Header, Got::Body("{}"), Got::End],
        ),
        (
            "a length that is no number",
            b"Content-Length: ten\r\n\r\n".to_vec(),
            vec![Got::Header, Got::End],
        ),
        (
            "a body cut short",
            b"Content-Length: 10\r\n\r\nabc".to_vec(),
            vec![Got::Truncated],
        ),
        (
            "headers cut short",
            b"Content-Length: 10\r\n".to_vec(),
            vec![Got::Truncated],
        ),
        (
            "an absurd length",
            b"Content-Length: 99999999999\r\n\r\n".to_vec(),
            vec![Got::TooLarge],
        ),
    ];
    for (name, input, expected) in cases {
        assert_eq!(read_all(&input).await, expected, "{name}");
    }
}
