/** Python sources bundled as text (esbuild's text loader): the diagnosis writes them where a program's Python reads them. */
declare module '*.py' {
  const text: string;
  export default text;
}
