import react from "@vitejs/plugin-react"
import { defineConfig } from "vite"

/**
 * The dashboard's pages, built static for `/dashboard/` (served by packages/http's
 * `DashboardHttp.PagesLive` under a CSP with `script-src 'self'` and `style-src 'self'`): no inline
 * script (no module-preload polyfill) and no inline style (CSS in files, no asset inlined).
 */
export default defineConfig({
  base: "/dashboard/",
  plugins: [react()],
  build: {
    outDir: "dist",
    emptyOutDir: true,
    assetsInlineLimit: 0,
    cssCodeSplit: false,
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: "es2022",
    chunkSizeWarningLimit: 1024
  }
})
