# Shared by .ci/run and scripts/demo.sh (sourced, not run): the steps both take on a fresh machine.

# Java runs Neo4j and Maven fetches its jars; install them from Debian's packages when missing.
# --with-browser-test (CI): also headless Chromium and its driver, for tests/test_browser.py.
ensure_system_tools() {
  local missing=()
  command -v mvn >/dev/null 2>&1 || missing+=(maven)
  command -v java >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
  if [ "${1:-}" = "--with-browser-test" ]; then
    command -v chromium >/dev/null 2>&1 || missing+=(chromium)
    command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
  fi
  ((${#missing[@]})) || return 0
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
  else
    echo "please install: ${missing[*]} (Java 17 for Neo4j 5.26, Java 25 for 2026.x; Maven;"
    echo "  chromium and chromium-driver for the Browser test)"
    return 1
  fi
}

# The Neo4j version to run: GUIDEDRAG_NEO4J_VERSION (default 2026.08.1), or the 5.26 LTS line on
# Java 17 when the machine lacks the Java that version needs. Needs the project installed.
neo4j_version_for_this_machine() {
  local version=${GUIDEDRAG_NEO4J_VERSION:-2026.08.1}
  if ! python -c "from guidedrag_graph.runtime import find_java, server_line; find_java(server_line('$version').java_major)" 2>/dev/null; then
    echo "no Java for Neo4j $version here; falling back to the LTS line 5.26.30 on Java 17" >&2
    version=5.26.30
  fi
  echo "$version"
}
