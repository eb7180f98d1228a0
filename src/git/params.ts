import { z } from "zod";

/** Refuses a value git could read as an option (`-x`, `--upload-pack=…`) or that carries a NUL or newline. */
function notOption(what: string) {
  return z
    .string()
    .min(1)
    .refine((v) => !v.startsWith("-"), { message: `must not start with "-" (git would read it as an option)` })
    .refine((v) => !/[\0\n\r]/.test(v), { message: `a ${what} cannot contain NUL or line breaks` });
}

export const refParam = () => notOption("ref");
export const remoteParam = () => notOption("remote");
export const urlParam = () => notOption("url");
export const pathParam = () => notOption("path");
export const pathsParam = () => z.array(pathParam()).min(1);
