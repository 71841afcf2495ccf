import { defineConfig } from 'vite';

// The built app is embedded in the Go binary (dashboard.go): its page at /,
// its hashed files under /assets/ (dashboard.AssetsPrefix). JSX is Preact's
// (tsconfig's jsxImportSource, which esbuild reads).
export default defineConfig({
  base: '/',
  resolve: { alias: { react: 'preact/compat', 'react-dom': 'preact/compat' } },
  build: {
    outDir: 'dist',
    assetsDir: 'assets',
    emptyOutDir: true,
    target: 'es2020',
    modulePreload: { polyfill: false }, // the polyfill is an inline script the CSP refuses
    cssCodeSplit: false,
  },
});
