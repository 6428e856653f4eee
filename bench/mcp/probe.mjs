// Preloaded into the MCP servers the `mcp-stdio` and `mcp-http` bench scenarios spawn
// (`node --import ./probe.mjs …`): on SIGUSR2 the server writes its own CPU time (µs, user +
// system, from process.cpuUsage) and resident set size (bytes) to stderr as one line
// `toolrun-bench-probe {"cpuUs":…,"rss":…}`. The bench reads CPU time from the server itself
// because /proc's clock ticks (10 ms) are too coarse for microseconds per call.
process.on('SIGUSR2', () => {
  const { user, system } = process.cpuUsage();
  process.stderr.write(`toolrun-bench-probe ${JSON.stringify({ cpuUs: user + system, rss: process.memoryUsage.rss() })}\n`);
});
