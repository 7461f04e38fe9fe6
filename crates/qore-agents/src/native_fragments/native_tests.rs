use std::collections::HashMap;

use minijinja::context;
use qore_core::{ContentBlock, ImageData, ImageSource, Message, Role};

use super::*;

/// Each bundled partial's per-message template is its dialect's; one byte changed, it is
/// nobody's.
#[test]
fn a_bundled_partials_item_and_only_it_has_a_writer() {
    let partials = Partials::default();
    for &(dialect, name) in PARTIALS {
        let text = crate::template_text::from_inja(&partials.load(name).unwrap());
        let item = cut(&text).unwrap().item;
        assert_eq!(dialect_of(&item, &partials), Some(dialect), "{name}");
        let edited = item.replacen("}", "} ", 1);
        assert_eq!(dialect_of(&edited, &partials), None, "{name}, edited");
    }
    assert_eq!(dialect_of("{{ tojson(msg.role) }},", &partials), None);
}

#[test]
fn marks_are_read_from_the_context() {
    let cases = [
        (context! {}, false, None),
        (
            context! { cache => context! { breakpoints => ["system"] } },
            false,
            None,
        ),
        (
            context! { cache => context! { breakpoints => ["tools", "last_user_message"] } },
            true,
            None,
        ),
        (
            context! { cache => context! { breakpoints => ["last_user_message"], ttl => "1h" } },
            true,
            Some("1h"),
        ),
    ];
    for (ctx, last_user_message, ttl) in cases {
        let marks = Marks::of(&ctx);
        assert_eq!(marks.last_user_message, last_user_message, "{ctx:?}");
        assert_eq!(marks.ttl.as_deref(), ttl, "{ctx:?}");
    }
}

/// Ollama takes images as inline bytes: a URL is declined (the template then refuses it
/// with its own message); bytes are written.
#[test]
fn a_writer_declines_what_its_template_refuses() {
    let names = HashMap::new();
    let with = |data: ImageData| {
        Message::new(
            Role::User,
            vec![
                ContentBlock::text("see"),
                ContentBlock::Image(ImageSource {
                    media_type: Some("image/png".into()),
                    data,
                }),
            ],
        )
    };
    let url = with(ImageData::Url("https://example.com/a.png".into()));
    let bytes = with(ImageData::Bytes(vec![1, 2, 3]));
    let write_one = |message: &Message| {
        let input = Input {
            message,
            names: &names,
            last_user: true,
        };
        let mut out = Vec::new();
        write(Dialect::Ollama, &input, &Marks::default(), &mut out).then_some(out)
    };
    assert_eq!(write_one(&url), None);
    let written = String::from_utf8(write_one(&bytes).unwrap()).unwrap();
    assert_eq!(
        written,
        "\n{\"role\": \"user\", \"content\": \"see\", \"images\": [\"AQID\"]},"
    );
}
