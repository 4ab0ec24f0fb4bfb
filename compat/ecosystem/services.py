"""Services a crate's test suite connects to (`needs=` in crates.txt), started by the harness on
loopback in a fresh temporary directory and always stopped: PostgreSQL 15 (`postgres`) and
RabbitMQ 3.10 (`rabbitmq`).
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PG_VERSION = "15"
PG_BIN = Path(f"/usr/lib/postgresql/{PG_VERSION}/bin")
PG_PORT = 5433  # tokio-postgres's tests hard-code `port=5433` / `127.0.0.1:5433`

# pg_hba.conf, after rust-postgres's docker/sql_setup.sh (the server tokio-postgres's tests are
# written against) and deadpool-postgres's CI (user/password/db `deadpool`, scram). The server
# listens on 127.0.0.1 only, so only IPv4 loopback lines are needed.
POSTGRES_HBA = """\
# TYPE  DATABASE  USER        ADDRESS       METHOD
local   all       all                       trust
host    all       pass_user   127.0.0.1/32  password
host    all       md5_user    127.0.0.1/32  md5
host    all       scram_user  127.0.0.1/32  scram-sha-256
host    all       deadpool    127.0.0.1/32  scram-sha-256
host    all       postgres    127.0.0.1/32  trust
"""

# Roles and extensions. md5_user's password is stored as an md5 hash, so the md5 tests really do
# md5 (a SCRAM-stored password makes the server switch `md5` lines to SCRAM); scram_user's and
# deadpool's as SCRAM (PG 15's default). hstore, citext and ltree are the types tests' extensions.
POSTGRES_SETUP = """\
CREATE ROLE pass_user PASSWORD 'password' LOGIN;
SET password_encryption = 'md5';
CREATE ROLE md5_user PASSWORD 'password' LOGIN;
SET password_encryption = 'scram-sha-256';
CREATE ROLE scram_user PASSWORD 'password' LOGIN;
CREATE ROLE deadpool PASSWORD 'deadpool' LOGIN;
CREATE DATABASE deadpool OWNER deadpool;
CREATE EXTENSION hstore;
CREATE EXTENSION citext;
CREATE EXTENSION ltree;
"""

# postgresql.conf additions. Unix socket in the temporary directory only (not /var/run/postgresql,
# which a system cluster may use); tokio-postgres's one unix-socket test is #[ignore]d upstream.
POSTGRES_CONF = """\
listen_addresses = '127.0.0.1'
port = {port}
unix_socket_directories = '{sockdir}'
max_connections = 100
fsync = off
synchronous_commit = off
full_page_writes = off
log_min_messages = warning
log_connections = off
"""


def port_in_use(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


class Postgres:
    """A throwaway PostgreSQL cluster: initdb'd into a fresh temporary directory owned by the
    `postgres` user (PostgreSQL refuses to run as root), started with pg_ctl on 127.0.0.1:5433."""

    name = "postgres"

    def __init__(self, logdir, label):
        self.logdir = logdir
        self.label = label
        self.dir = None
        self.started = False

    @staticmethod
    def install():
        if (PG_BIN / "initdb").exists():
            return
        if os.geteuid() != 0:
            sys.exit(f"postgres: {PG_BIN}/initdb is missing and installing `postgresql` needs root")
        print(f"postgres: {PG_BIN}/initdb missing, installing Debian's postgresql", flush=True)
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
        subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "postgresql"], check=True, env=env)
        if not (PG_BIN / "initdb").exists():
            sys.exit(f"postgres: {PG_BIN}/initdb still missing after installing postgresql")

    def as_postgres(self, *cmd, **kw):
        prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        # From `/`: the `postgres` user may not enter the caller's directory (a clone under
        # a root-only temporary directory), and its tools complain on every call otherwise.
        kw.setdefault("cwd", "/")
        return subprocess.run(prefix + [str(c) for c in cmd], check=True, **kw)

    @property
    def data(self):
        return self.dir / "data"

    @property
    def log(self):
        return self.dir / "postgres.log"

    def start(self):
        self.install()
        if port_in_use(PG_PORT):
            sys.exit(
                f"postgres: 127.0.0.1:{PG_PORT} is already in use (a server left by a killed run? "
                f"see `ls -d {tempfile.gettempdir()}/weft-ecosystem-pg-*`)"
            )
        self.dir = Path(tempfile.mkdtemp(prefix="weft-ecosystem-pg-"))
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres", "postgres")
        quiet = dict(stdout=subprocess.DEVNULL)
        self.as_postgres(PG_BIN / "initdb", "-D", self.data, "-U", "postgres", "-A", "trust",
                         "-E", "UTF8", "--locale=C", "--no-sync", **quiet)
        (self.data / "pg_hba.conf").write_text(POSTGRES_HBA)
        with open(self.data / "postgresql.conf", "a") as conf:
            conf.write("\n# compat/ecosystem/run.py\n" + POSTGRES_CONF.format(port=PG_PORT, sockdir=self.dir))
        # A new session: Ctrl-C at the terminal reaches the harness, not the server, which the
        # harness then stops in order.
        self.started = True
        try:
            self.as_postgres(PG_BIN / "pg_ctl", "-D", self.data, "-l", self.log, "-w", "-t", "60", "start",
                             start_new_session=True, **quiet)
        except subprocess.CalledProcessError:
            log = self.log.read_text(errors="replace") if self.log.exists() else "(no log)"
            print(f"postgres: pg_ctl start failed; the end of its log:\n{log[-3000:]}", file=sys.stderr, flush=True)
            raise
        self.as_postgres("psql", "-X", "-q", "-h", self.dir, "-p", PG_PORT, "-U", "postgres", "-d", "postgres",
                         "-v", "ON_ERROR_STOP=1", "-f", "-", input=POSTGRES_SETUP, text=True, **quiet)
        print(f"postgres: started on 127.0.0.1:{PG_PORT} in {self.dir}", flush=True)

    def stop(self):
        if self.dir is None:
            return
        try:
            if self.started and (self.data / "postmaster.pid").exists():
                try:
                    self.as_postgres(PG_BIN / "pg_ctl", "-D", self.data, "-m", "fast", "-w", "-t", "30", "stop",
                                     stdout=subprocess.DEVNULL, start_new_session=True)
                except subprocess.CalledProcessError:
                    self.kill()
        finally:
            try:
                if self.log.exists():
                    self.logdir.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(self.log, self.logdir / f"postgres-{self.label}.log")
            finally:
                shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
            self.started = False

    def kill(self):
        """pg_ctl could not stop it: SIGKILL the postmaster (its backends exit when it is gone)."""
        try:
            pid = int((self.data / "postmaster.pid").read_text().split()[0])
            os.kill(pid, signal.SIGKILL)
            time.sleep(1)
        except (OSError, ValueError, IndexError):
            pass


RABBITMQ_BIN = Path("/usr/lib/rabbitmq/bin")
RABBITMQ_PORT = 5672  # lapin's tests: AMQP_ADDR, else amqp://127.0.0.1:5672/%2f as guest/guest
RABBITMQ_DIST_PORT = 25672  # Erlang distribution (rabbitmqctl talks to the node through it)
RABBITMQ_EPMD_PORT = 24369  # a private epmd (our child, not a daemon), not a system one on 4369
RABBITMQ_NODENAME = "weft-ecosystem@localhost"

# rabbitmq.conf: the AMQP listener on IPv4 loopback only; `guest` (the default user, password
# `guest`, vhost `/`) may log in from loopback only, RabbitMQ's default, said out loud.
RABBITMQ_CONF = """\
listeners.tcp.default = 127.0.0.1:{port}
loopback_users.guest = true
"""


class RabbitMQ:
    """A throwaway RabbitMQ node (Debian's `rabbitmq-server`): its config, Mnesia database, logs,
    Erlang cookie and plugin list in a fresh temporary directory; AMQP on 127.0.0.1:5672, the
    distribution port and a private epmd on loopback; no plugins."""

    name = "rabbitmq"

    def __init__(self, logdir, label):
        self.logdir = logdir
        self.label = label
        self.dir = None
        self.proc = None
        self.epmd = None

    @staticmethod
    def install():
        if (RABBITMQ_BIN / "rabbitmq-server").exists():
            return
        if os.geteuid() != 0:
            sys.exit(f"rabbitmq: {RABBITMQ_BIN}/rabbitmq-server is missing and installing `rabbitmq-server` needs root")
        print(f"rabbitmq: {RABBITMQ_BIN}/rabbitmq-server missing, installing Debian's rabbitmq-server", flush=True)
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
        subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "rabbitmq-server"],
                       check=True, env=env)
        if not (RABBITMQ_BIN / "rabbitmq-server").exists():
            sys.exit(f"rabbitmq: {RABBITMQ_BIN}/rabbitmq-server still missing after installing rabbitmq-server")

    @property
    def log(self):
        return self.dir / "rabbitmq.log"

    def env(self):
        """The node's environment: every path inside the temporary directory (an empty
        rabbitmq-env.conf stands in for /etc/rabbitmq's), the caller's RABBITMQ_*/ERL_* dropped."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("RABBITMQ_", "ERL_"))}
        env.update(
            HOME=str(self.dir / "home"),  # the Erlang cookie
            RABBITMQ_CONF_ENV_FILE=str(self.dir / "rabbitmq-env.conf"),
            RABBITMQ_CONFIG_FILE=str(self.dir / "rabbitmq.conf"),
            RABBITMQ_ENABLED_PLUGINS_FILE=str(self.dir / "enabled_plugins"),
            RABBITMQ_MNESIA_BASE=str(self.dir / "mnesia"),
            RABBITMQ_LOG_BASE=str(self.dir / "log"),
            RABBITMQ_LOGS="-",  # to stdout, which is self.log
            RABBITMQ_PID_FILE=str(self.dir / "rabbitmq.pid"),
            RABBITMQ_NODENAME=RABBITMQ_NODENAME,
            RABBITMQ_NODE_IP_ADDRESS="127.0.0.1",
            RABBITMQ_NODE_PORT=str(RABBITMQ_PORT),
            RABBITMQ_DIST_PORT=str(RABBITMQ_DIST_PORT),
            RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}",
            ERL_EPMD_ADDRESS="127.0.0.1",
            ERL_EPMD_PORT=str(RABBITMQ_EPMD_PORT),
        )
        return env

    def ctl(self, *args, timeout=60):
        return subprocess.run([RABBITMQ_BIN / "rabbitmqctl", *args], env=self.env(), cwd=self.dir, check=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=timeout)

    def start(self):
        self.install()
        for port in (RABBITMQ_PORT, RABBITMQ_DIST_PORT, RABBITMQ_EPMD_PORT):
            if port_in_use(port):
                sys.exit(
                    f"rabbitmq: 127.0.0.1:{port} is already in use (a node or epmd left by a killed run? "
                    f"see `ls -d {tempfile.gettempdir()}/weft-ecosystem-rabbitmq-*`)"
                )
        self.dir = Path(tempfile.mkdtemp(prefix="weft-ecosystem-rabbitmq-"))
        (self.dir / "home").mkdir()
        (self.dir / "rabbitmq-env.conf").write_text("")
        (self.dir / "rabbitmq.conf").write_text(RABBITMQ_CONF.format(port=RABBITMQ_PORT))
        (self.dir / "enabled_plugins").write_text("[].\n")
        try:
            self.launch(time.monotonic() + 120)
        except BaseException:
            log = self.log.read_text(errors="replace") if self.log.exists() else "(no log)"
            print(f"rabbitmq: the node did not start; the end of its log:\n{log[-3000:]}", file=sys.stderr, flush=True)
            raise
        print(f"rabbitmq: started on 127.0.0.1:{RABBITMQ_PORT} in {self.dir}", flush=True)

    def launch(self, deadline):
        """epmd, then the node, each in a new session (as for PostgreSQL: Ctrl-C reaches the
        harness, which stops them in order); waits until the AMQP port answers (the listener
        opens last in the boot), then for `rabbitmqctl await_startup`, the node's own word.
        epmd runs in the foreground as our child: the node would otherwise start one as a
        daemon that outlives it (and, under a PID 1 that does not reap, lingers as a zombie)."""
        with open(self.log, "wb") as log:
            spawn = dict(env=self.env(), cwd=self.dir, stdin=subprocess.DEVNULL, stdout=log,
                         stderr=subprocess.STDOUT, start_new_session=True)
            self.epmd = subprocess.Popen(["epmd"], **spawn)
            self.wait_port(RABBITMQ_EPMD_PORT, self.epmd, "epmd", deadline)
            self.proc = subprocess.Popen([RABBITMQ_BIN / "rabbitmq-server"], **spawn)
        self.wait_port(RABBITMQ_PORT, self.proc, "rabbitmq-server", deadline)
        self.ctl("await_startup", "--timeout", "60", timeout=90)

    @staticmethod
    def wait_port(port, proc, what, deadline):
        while not port_in_use(port):
            if proc.poll() is not None:
                raise RuntimeError(f"{what} exited with {proc.returncode}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"rabbitmq: {what} not listening on 127.0.0.1:{port} after 120 s")
            time.sleep(0.05)

    def stop(self):
        if self.dir is None:
            return
        try:
            if self.proc is not None and self.proc.poll() is None:
                try:
                    self.ctl("stop", timeout=60)
                    self.proc.wait(timeout=60)
                except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                    self.proc.wait()
            if self.epmd is not None and self.epmd.poll() is None:
                self.epmd.terminate()
                try:
                    self.epmd.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.epmd.kill()
                    self.epmd.wait()
        finally:
            try:
                if self.log.exists():
                    self.logdir.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(self.log, self.logdir / f"rabbitmq-{self.label}.log")
            finally:
                shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
            self.proc = None
            self.epmd = None


SERVICES = {"postgres": Postgres, "rabbitmq": RabbitMQ}
RUNNING = []  # started services, stopped by main's finally or, failing that, at exit


def stop_all():
    while RUNNING:
        RUNNING.pop().stop()


def start_services(names, logdir, label):
    for name in names:
        service = SERVICES[name](logdir, label)
        RUNNING.append(service)
        service.start()


def on_signal(signum, _frame):
    # Raise in the main thread: the finally blocks (and subprocess.run's kill of a running test
    # binary) run as on Ctrl-C.
    sys.exit(128 + signum)
