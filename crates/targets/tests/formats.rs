//! Every detail of the `http` and `json` target formats, the defaults, the
//! eager and lazy targeters, and errors with line numbers.

use std::io::Cursor;
use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;
use volley_targets::{read_all, Defaults, Format, Target, TargetError, TargetReader, Targeter};

fn http(input: &str) -> Result<Vec<Arc<Target>>, TargetError> {
    read_all(
        Cursor::new(input.to_string()),
        Format::Http,
        &Defaults::default(),
    )
}

fn json(input: &str) -> Result<Vec<Arc<Target>>, TargetError> {
    read_all(
        Cursor::new(input.to_string()),
        Format::Json,
        &Defaults::default(),
    )
}

fn h(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn target(method: &str, url: &str, headers: &[(&str, &str)], body: &str) -> Target {
    Target {
        method: method.into(),
        url: url.into(),
        headers: h(headers),
        body: Bytes::from(body.to_string()),
    }
}

fn plain(targets: Vec<Arc<Target>>) -> Vec<Target> {
    targets.iter().map(|t| (**t).clone()).collect()
}

/// A scratch directory removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir =
            std::env::temp_dir().join(format!("volley-targets-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn http_format_table() {
    let cases: Vec<(&str, Vec<Target>)> =
        vec![
        ("GET http://a/", vec![target("GET", "http://a/", &[], "")]),
        ("GET http://a/\n", vec![target("GET", "http://a/", &[], "")]),
        (
            "GET http://a/\nX-A: 1\nX-B:2\n  X-C :  3  \n",
            vec![target("GET", "http://a/", &[("X-A", "1"), ("X-B", "2"), ("X-C", "3")], "")],
        ),
        (
            // Repeated headers keep every value, in order, case as written.
            "GET http://a/\nx-tag: one\nX-Tag: two\nx-tag: three\n",
            vec![target(
                "GET",
                "http://a/",
                &[("x-tag", "one"), ("X-Tag", "two"), ("x-tag", "three")],
                "",
            )],
        ),
        (
            // Values may hold colons.
            "GET http://a/\nHost: b:8080\nX-Time: 12:30:00\n",
            vec![target("GET", "http://a/", &[("Host", "b:8080"), ("X-Time", "12:30:00")], "")],
        ),
        (
            "GET http://a/1\n\nPOST https://b/2\nX: y\n\n\n\nDELETE http://c/3\n",
            vec![
                target("GET", "http://a/1", &[], ""),
                target("POST", "https://b/2", &[("X", "y")], ""),
                target("DELETE", "http://c/3", &[], ""),
            ],
        ),
        (
            // No blank line between targets.
            "GET http://a/1\nGET http://a/2\nX: 1\nPUT http://a/3\n",
            vec![
                target("GET", "http://a/1", &[], ""),
                target("GET", "http://a/2", &[("X", "1")], ""),
                target("PUT", "http://a/3", &[], ""),
            ],
        ),
        (
            // Comments anywhere, including between headers.
            "# leading\n\n  # indented\nGET http://a/\n# between\nX: 1\n#X: 2\nY: 3\n# trailing\n",
            vec![target("GET", "http://a/", &[("X", "1"), ("Y", "3")], "")],
        ),
        (
            // CRLF and stray whitespace.
            "\r\n  GET http://a/  \r\nX: 1\r\n\r\nHEAD http://b/\r\n",
            vec![
                target("GET", "http://a/", &[("X", "1")], ""),
                target("HEAD", "http://b/", &[], ""),
            ],
        ),
        (
            // Tab between method and URL; any upper-case method.
            "OPTIONS\thttp://a/\nPROPFIND http://a/dav\nCONNECT   http://a:443\n",
            vec![
                target("OPTIONS", "http://a/", &[], ""),
                target("PROPFIND", "http://a/dav", &[], ""),
                target("CONNECT", "http://a:443", &[], ""),
            ],
        ),
        (
            "GET https://user:pw@[::1]:8443/p?q=1&r=%20#f\n",
            vec![target("GET", "https://user:pw@[::1]:8443/p?q=1&r=%20#f", &[], "")],
        ),
    ];
    for (input, want) in cases {
        match http(input) {
            Ok(got) => assert_eq!(plain(got), want, "{input:?}"),
            Err(e) => panic!("{input:?}: {e}"),
        }
    }
}

#[test]
fn http_format_errors_name_the_line() {
    let cases: &[(&str, &str)] = &[
        ("", "targets: no targets to attack"),
        ("\n\n# only comments\n\n", "targets: no targets to attack"),
        ("GET", "targets:1: bad target line \"GET\" (want \"METHOD URL\")"),
        ("\n\nhttp://a/", "targets:3: bad target line \"http://a/\" (want \"METHOD URL\")"),
        (
            "get http://a/",
            "targets:1: bad method \"get\" in \"get http://a/\" (want an upper-case method like GET)",
        ),
        ("G3T http://a/", "targets:1: bad method \"G3T\""),
        ("GET /relative", "targets:1: bad URL \"/relative\": not absolute"),
        ("GET ftp://a/", "targets:1: bad URL \"ftp://a/\": scheme \"ftp\""),
        ("GET http://a b/", "targets:1: bad URL \"http://a b/\""),
        (
            "GET http://a/\nX: 1\nFoo\n",
            "targets:3: bad header line \"Foo\" (want \"Key: value\")",
        ),
        ("GET http://a/\nX:\n", "targets:2: bad header line \"X:\" (want \"Key: value\")"),
        ("GET http://a/\n: v\n", "targets:2: bad header line \": v\""),
        ("GET http://a/\nBad Name: v\n", "targets:2: bad header name \"Bad Name\""),
        ("GET http://a/\nX: a\rb\n", "targets:2: control character in the value of header \"X\""),
        ("GET http://a/\n@\n", "targets:2: bad body line \"@\""),
        ("GET http://a/\n\nGET http://b/\n@/nonexistent/volley/body\n", "targets:4: bad body file \"/nonexistent/volley/body\""),
        (
            // A target ends at its @body line: a header after it is a bad target line.
            "GET http://a/\n@/dev/null\nX: 1\n",
            "targets:3: bad target line \"X: 1\" (want \"METHOD URL\"; header lines go right after",
        ),
    ];
    for (input, want) in cases {
        let err = http(input).expect_err(input).to_string();
        assert!(err.starts_with(want), "{input:?}:\n got {err}\nwant {want}");
        assert!(!err.contains('\n'), "{err}");
    }
}

#[test]
fn http_body_files() {
    let dir = TempDir::new("bodies");
    std::fs::write(dir.0.join("a.json"), b"{\"a\":1}").unwrap();
    std::fs::create_dir_all(dir.0.join("sub")).unwrap();
    std::fs::write(dir.0.join("sub/b.bin"), [0u8, 1, 2, 255]).unwrap();
    std::fs::write(dir.0.join("empty"), b"").unwrap();
    let abs = dir.0.join("a.json");
    let input = format!(
        "POST http://a/1\nContent-Type: application/json\n@a.json\n\n\
         PUT http://a/2\n@ sub/b.bin \n\
         POST http://a/3\n@{}\n\
         POST http://a/4\n@empty\n\
         GET http://a/5\n",
        abs.display()
    );
    let defaults = Defaults {
        body: Some(Bytes::from_static(b"default")),
        base_dir: Some(dir.0.clone()),
        ..Defaults::default()
    };
    let got = read_all(Cursor::new(input), Format::Http, &defaults).unwrap();
    let bodies: Vec<&[u8]> = got.iter().map(|t| &t.body[..]).collect();
    assert_eq!(
        bodies,
        [
            &b"{\"a\":1}"[..],
            &[0, 1, 2, 255],
            b"{\"a\":1}",
            b"",
            b"default"
        ]
    );
    assert_eq!(got[0].headers, h(&[("Content-Type", "application/json")]));

    // Without base_dir, relative paths are relative to the current directory.
    let rel = "GET http://a/\n@Cargo.toml\n";
    let got = read_all(Cursor::new(rel), Format::Http, &Defaults::default()).unwrap();
    assert!(got[0].body.starts_with(b"[package]"));
}

#[test]
fn defaults_are_merged_under_target_headers() {
    let defaults = Defaults {
        headers: h(&[("Authorization", "Bearer x"), ("X-Tag", "default")]),
        body: Some(Bytes::from_static(b"B")),
        base_dir: None,
    };
    let input = "GET http://a/\nX-Tag: mine\n\nGET http://b/\n";
    let got = read_all(Cursor::new(input), Format::Http, &defaults).unwrap();
    assert_eq!(
        got[0].headers,
        h(&[
            ("Authorization", "Bearer x"),
            ("X-Tag", "default"),
            ("X-Tag", "mine")
        ])
    );
    assert_eq!(
        got[1].headers,
        h(&[("Authorization", "Bearer x"), ("X-Tag", "default")])
    );
    assert_eq!(&got[1].body[..], b"B");

    let input = r#"{"method":"POST","url":"http://a/","header":{"X-Tag":["mine"]}}"#;
    let got = read_all(Cursor::new(input), Format::Json, &defaults).unwrap();
    assert_eq!(
        got[0].headers,
        h(&[
            ("Authorization", "Bearer x"),
            ("X-Tag", "default"),
            ("X-Tag", "mine")
        ])
    );
    assert_eq!(&got[0].body[..], b"B");
}

#[test]
fn json_format_table() {
    let cases: Vec<(&str, Vec<Target>)> = vec![
        (
            r#"{"method":"GET","url":"http://a/"}"#,
            vec![target("GET", "http://a/", &[], "")],
        ),
        (
            // base64 body, multi-valued headers in document order, unknown fields ignored.
            r#"{"method":"POST","url":"https://a/x","body":"aGVsbG8gd29ybGQ=","header":{"Z":["1","2"],"A":["3"]},"extra":[1,{"y":null}]}"#,
            vec![target("POST", "https://a/x", &[("Z", "1"), ("Z", "2"), ("A", "3")], "hello world")],
        ),
        (
            // Blank lines, CRLF, whitespace around objects, nulls.
            "\n{\"method\":\"GET\",\"url\":\"http://a/1\",\"body\":null,\"header\":null}\r\n\r\n  {\"url\":\"http://a/2\",\"method\":\"DELETE\",\"header\":{\"K\":null}}  \n",
            vec![target("GET", "http://a/1", &[], ""), target("DELETE", "http://a/2", &[], "")],
        ),
        (
            // Methods are tokens, any case.
            r#"{"method":"purge","url":"http://a/","body":""}"#,
            vec![target("purge", "http://a/", &[], "")],
        ),
    ];
    for (input, want) in cases {
        match json(input) {
            Ok(got) => assert_eq!(plain(got), want, "{input:?}"),
            Err(e) => panic!("{input:?}: {e}"),
        }
    }
}

#[test]
fn json_format_errors_name_the_line() {
    let cases: &[(&str, &str)] = &[
        ("", "targets: no targets to attack"),
        ("\n \n", "targets: no targets to attack"),
        (
            "{",
            "targets:1: bad JSON target: EOF while parsing an object (column 1)",
        ),
        (
            "{\"method\":\"GET\",\"url\":\"http://a/\"}\n{nope}\n",
            "targets:2: bad JSON target: key must be a string (column 2)",
        ),
        (
            r#"{"url":"http://a/"}"#,
            "targets:1: JSON target: required \"method\" is missing",
        ),
        (
            r#"{"method":"","url":"http://a/"}"#,
            "targets:1: JSON target: required \"method\" is missing",
        ),
        (
            r#"{"method":"GET"}"#,
            "targets:1: JSON target: required \"url\" is missing",
        ),
        (
            r#"{"method":"G T","url":"http://a/"}"#,
            "targets:1: bad method \"G T\"",
        ),
        (
            r#"{"method":"GET","url":"a/b"}"#,
            "targets:1: bad URL \"a/b\"",
        ),
        (
            r#"{"method":"GET","url":"http://a/","body":"!!"}"#,
            "targets:1: bad JSON target: \"body\" is not base64",
        ),
        (
            r#"{"method":"GET","url":"http://a/","header":{"K":"v"}}"#,
            "targets:1: bad JSON target: invalid type: string \"v\", expected a sequence",
        ),
        (
            r#"{"method":"GET","url":"http://a/","header":["K"]}"#,
            "targets:1: bad JSON target: invalid type: sequence",
        ),
        (
            r#"{"method":"GET","url":"http://a/","header":{"Bad Name":["v"]}}"#,
            "targets:1: bad header name \"Bad Name\"",
        ),
        (
            r#"{"method":"GET","url":"http://a/","method":"PUT"}"#,
            "targets:1: bad JSON target: duplicate field `method`",
        ),
        (
            "[1,2]",
            "targets:1: bad JSON target: want one JSON object per line",
        ),
        (
            "not json",
            "targets:1: bad JSON target: want one JSON object per line",
        ),
        (
            "{}\n",
            "targets:1: JSON target: required \"method\" is missing",
        ),
    ];
    for (input, want) in cases {
        let err = json(input).expect_err(input).to_string();
        assert!(err.starts_with(want), "{input:?}:\n got {err}\nwant {want}");
        assert!(!err.contains('\n'), "{err}");
    }
}

#[test]
fn eager_round_robin_and_lazy_end() {
    let input = "GET http://a/1\n\nGET http://a/2\n\nGET http://a/3\n";
    let mut rr =
        Targeter::read_eager(Cursor::new(input), Format::Http, &Defaults::default()).unwrap();
    assert!(!rr.is_lazy());
    assert_eq!(rr.targets().map(|t| t.len()), Some(3));
    let urls: Vec<String> = (0..7)
        .map(|_| rr.next().unwrap().unwrap().url.clone())
        .collect();
    assert_eq!(
        urls,
        [
            "http://a/1",
            "http://a/2",
            "http://a/3",
            "http://a/1",
            "http://a/2",
            "http://a/3",
            "http://a/1"
        ]
    );
    // Round-robin shares the same Arc, no copies.
    let mut rr2 =
        Targeter::read_eager(Cursor::new(input), Format::Http, &Defaults::default()).unwrap();
    let first = rr2.next().unwrap().unwrap();
    for _ in 0..2 {
        rr2.next().unwrap();
    }
    assert!(Arc::ptr_eq(&first, &rr2.next().unwrap().unwrap()));

    let mut lazy = Targeter::lazy(
        Box::new(Cursor::new(input)),
        Format::Http,
        Defaults::default(),
    );
    assert!(lazy.is_lazy());
    assert!(lazy.targets().is_none());
    for i in 1..=3 {
        assert_eq!(lazy.next().unwrap().unwrap().url, format!("http://a/{i}"));
    }
    assert_eq!(lazy.next(), Ok(None));
    assert_eq!(lazy.next(), Ok(None));

    assert_eq!(
        Targeter::eager(vec![]).unwrap_err(),
        TargetError::no_targets()
    );
    let lazy = Targeter::lazy(Box::new(Cursor::new("")), Format::Json, Defaults::default());
    assert_eq!(
        volley_targets::read_all_from(lazy).unwrap_err(),
        TargetError::no_targets()
    );
    let lazy = Targeter::lazy(
        Box::new(Cursor::new(input)),
        Format::Http,
        Defaults::default(),
    );
    assert_eq!(volley_targets::read_all_from(lazy).unwrap().len(), 3);
}

#[test]
fn lazy_reader_reports_errors_then_goes_on() {
    let input = "GET http://a/1\nBad\nGET http://a/2\n";
    let mut reader = TargetReader::new(Cursor::new(input), Format::Http, Defaults::default());
    let err = reader.next_target().unwrap_err();
    assert_eq!(
        err.to_string(),
        "targets:2: bad header line \"Bad\" (want \"Key: value\")"
    );
    assert_eq!(
        reader.next_target().unwrap().map(|t| t.url),
        Some("http://a/2".into())
    );
    assert_eq!(reader.next_target().unwrap(), None);
}

#[test]
fn targeter_is_send() {
    fn assert_send<T: Send>() {}
    assert_send::<Targeter>();
    assert_send::<Target>();
}
