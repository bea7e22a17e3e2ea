/** Module declarations for files imported as text (the embedded migrations). */
declare module '*.sql' {
  const text: string
  export default text
}
