/** Module declarations for files imported as text (the embedded migrations). */
declare module '*.sql' {
  const text: string
  export default text
}


// Stylesheets imported `with { type: 'file' }` resolve to a path Bun.file can open, in tests and in the binary.
declare module '*.css' { const path: string; export default path }
