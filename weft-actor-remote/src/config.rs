//! How a node joins a cluster: its name, where it listens, whom it connects to, whether it
//! scouts by multicast, how fast a silent peer is declared gone, and the limits that keep
//! hostile input harmless. Turned into a Zenoh configuration by `zenoh_config`.

use std::time::Duration;

/// A node's configuration. `NodeConfig::peer("name")` is a peer that listens on an ephemeral
/// loopback port and connects to nobody; add endpoints with the builder methods.
#[derive(Debug, Clone)]
pub struct NodeConfig {
    /// A human name (logs and `NodeInfo`; not an address and not unique).
    pub name: String,
    /// Zenoh mode: `"peer"` (default: nodes talk directly) or `"client"` (through a router).
    pub mode: String,
    /// Zenoh endpoints to listen on, e.g. `tcp/0.0.0.0:7447`, `tls/…`, `quic/…`.
    pub listen: Vec<String>,
    /// Endpoints to connect to (peers, or a router for larger deployments).
    pub connect: Vec<String>,
    /// Multicast scouting (finds peers on the LAN without endpoints). Off by default.
    pub multicast: bool,
    /// A peer that says nothing for this long is declared gone (Zenoh's link lease); a closed
    /// connection (a killed process) is noticed at once.
    pub lease: Duration,
    /// Frames over this size are dropped and counted, never decoded.
    pub max_message_bytes: usize,
    /// Bytes of remote messages this node may hold for actors whose mailboxes are full (the
    /// overflow queues, all actors together). Below it nothing is dropped, as in Erlang; past it
    /// tells are dropped (counted) and asks answered `Overloaded`, so a flood cannot take the
    /// node's memory.
    pub max_queued_bytes: usize,
    /// Zenoh user/password authentication (`usrpwd`), both sides needing the same dictionary.
    pub auth: Option<Auth>,
    /// Extra Zenoh settings, as `(path, json5 value)` pairs applied last (e.g. TLS files).
    pub zenoh: Vec<(String, String)>,
}

/// Zenoh's user/password authentication: this node's credentials and the dictionary file
/// (`user:password` lines) it checks others against.
#[derive(Debug, Clone)]
pub struct Auth {
    pub user: String,
    pub password: String,
    pub dictionary_file: String,
}

impl NodeConfig {
    pub fn peer(name: &str) -> NodeConfig {
        NodeConfig {
            name: name.to_string(),
            mode: "peer".into(),
            listen: vec!["tcp/127.0.0.1:0".into()],
            connect: Vec::new(),
            multicast: false,
            lease: Duration::from_secs(3),
            max_message_bytes: 1 << 20,
            max_queued_bytes: 256 << 20,
            auth: None,
            zenoh: Vec::new(),
        }
    }

    pub fn listen(mut self, endpoint: &str) -> Self {
        if self.listen == ["tcp/127.0.0.1:0"] {
            self.listen.clear();
        }
        self.listen.push(endpoint.to_string());
        self
    }

    pub fn connect(mut self, endpoint: &str) -> Self {
        self.connect.push(endpoint.to_string());
        self
    }

    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    pub fn multicast(mut self, on: bool) -> Self {
        self.multicast = on;
        self
    }

    pub fn auth(mut self, auth: Auth) -> Self {
        self.auth = Some(auth);
        self
    }

    pub fn max_message_bytes(mut self, n: usize) -> Self {
        self.max_message_bytes = n;
        self
    }

    /// The Zenoh configuration this node opens its session with.
    pub fn zenoh_config(&self) -> Result<zenoh::Config, String> {
        let mut c = zenoh::Config::default();
        let json = |v: &[String]| serde_json_list(v);
        let mut set = |k: &str, v: String| c.insert_json5(k, &v).map_err(|e| format!("zenoh config {k} = {v}: {e}"));
        set("mode", format!("{:?}", self.mode))?;
        set("listen/endpoints", json(&self.listen))?;
        set("connect/endpoints", json(&self.connect))?;
        set("scouting/multicast/enabled", self.multicast.to_string())?;
        let lease_ms = self.lease.as_millis().max(100);
        set("transport/link/tx/lease", lease_ms.to_string())?;
        set("transport/link/tx/keep_alive", "4".into())?;
        if let Some(a) = &self.auth {
            set("transport/auth/usrpwd/user", format!("{:?}", a.user))?;
            set("transport/auth/usrpwd/password", format!("{:?}", a.password))?;
            set("transport/auth/usrpwd/dictionary_file", format!("{:?}", a.dictionary_file))?;
        }
        for (k, v) in &self.zenoh {
            set(k, v.clone())?;
        }
        Ok(c)
    }
}

/// `["a","b"]` with each string quoted as JSON (json5 reads JSON).
fn serde_json_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("{s:?}")).collect();
    format!("[{}]", quoted.join(","))
}
