#!/usr/bin/env node
// Installed entry point: runs the compiled CLI (make build / npm run build).
import "../dist/src/cli.js";
