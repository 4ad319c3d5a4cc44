/* The protocol-buffer text format's grammar: a file is a message's fields; a field is
 * `name: scalar`, `name: [scalar, ...]` (the field repeated), or `name [:] { fields }` (also
 * with angle brackets). Adjacent strings join; `,` or `;` may follow any field. */
%define api.pure full
%define api.prefix {pb}
%define parse.error custom
%locations
%param {void *scanner}
%parse-param {PbCtx *ctx}

%code requires {
#include "prototxt_ctx.h"
}

%code provides {
int pblex(PBSTYPE *lval, PBLTYPE *lloc, void *scanner);
}

%code {
#include <string.h>

#include "syntax_error.h"

#define YYMAXDEPTH 10000 /* bison's default, named for the message */

#define LOC_OF(l) ((SrcLoc){ctx->file, (l).first_line, (l).first_column})

/* Bison's own errors: a full stack (its "memory exhausted") is input nested too deeply. */
static void pberror(PBLTYPE *loc, void *scanner, PbCtx *ctx, const char *msg) {
  (void)scanner;
  if (!strcmp(msg, "memory exhausted"))
    report_too_deep(LOC_OF(*loc), YYMAXDEPTH);
  else
    diag_error(LOC_OF(*loc), "%s", msg);
}


static PbMessage *new_message(PbCtx *ctx, SrcLoc loc) {
  PbMessage *msg = arena_alloc(&ctx->m->arena, sizeof *msg);
  msg->loc = loc;
  return msg;
}

static PbField *new_field(PbCtx *ctx, PbKind kind) {
  PbField *f = arena_alloc(&ctx->m->arena, sizeof *f);
  f->kind = kind;
  return f;
}

/* Appends `value` (or, for a list, each of its items) to `msg` as fields named `name`. */
static void add(PbCtx *ctx, PbMessage *msg, const char *name, SrcLoc loc, const PbField *value) {
  PbField f = *value;
  f.name = name;
  f.loc = loc;
  vec_push(&ctx->m->arena, msg->fields, f);
}
}

%union {
  int64_t num;
  double real;
  const char *str;
  PbField *field;
  PbMessage *msg;
}

%token <num> INT "integer"
%token <real> FLOAT "number"
%token <str> NAME "name" STRING "string"

%type <field> scalar number strings
%type <msg> fields scalars

%%

file
  : fields                            { ctx->root = $1; ctx->root->loc = (SrcLoc){ctx->file, 1, 1}; }
  ;

fields
  : %empty                            { $$ = new_message(ctx, LOC_OF(@$)); }
  | fields NAME ':' scalar sep_opt    { add(ctx, $1, $2, LOC_OF(@2), $4); $$ = $1; }
  | fields NAME ':' '[' scalars ']' sep_opt
                                      {
                                        for (int i = 0; i < $5->fields.len; i++)
                                          add(ctx, $1, $2, LOC_OF(@2), &$5->fields.data[i]);
                                        $$ = $1;
                                      }
  | fields NAME colon_opt '{' fields '}' sep_opt
                                      {
                                        PbField *f = new_field(ctx, PB_MESSAGE);
                                        f->msg = $5;
                                        f->msg->loc = LOC_OF(@4);
                                        add(ctx, $1, $2, LOC_OF(@2), f);
                                        $$ = $1;
                                      }
  | fields NAME colon_opt '<' fields '>' sep_opt
                                      {
                                        PbField *f = new_field(ctx, PB_MESSAGE);
                                        f->msg = $5;
                                        f->msg->loc = LOC_OF(@4);
                                        add(ctx, $1, $2, LOC_OF(@2), f);
                                        $$ = $1;
                                      }
  ;

scalars
  : %empty                            { $$ = new_message(ctx, LOC_OF(@$)); }
  | scalar                            { $$ = new_message(ctx, LOC_OF(@1)); add(ctx, $$, NULL, LOC_OF(@1), $1); }
  | scalars ',' scalar                { add(ctx, $1, NULL, LOC_OF(@3), $3); $$ = $1; }
  ;

scalar
  : number
  | '-' number                        { $$ = $2; $$->i = -$$->i; $$->f = -$$->f; }
  | strings
  | NAME                              { $$ = new_field(ctx, PB_WORD); $$->s = $1; }
  | '-' NAME                          { $$ = new_field(ctx, PB_WORD); $$->s = arena_printf(&ctx->m->arena, "-%s", $2); }
  ;

number
  : INT                               { $$ = new_field(ctx, PB_NUMBER); $$->integral = true; $$->i = $1; $$->f = (double)$1; }
  | FLOAT                             { $$ = new_field(ctx, PB_NUMBER); $$->f = $1; }
  ;

strings
  : STRING                            { $$ = new_field(ctx, PB_STRING); $$->s = $1; }
  | strings STRING                    { $$ = $1; $$->s = arena_printf(&ctx->m->arena, "%s%s", $1->s, $2); }
  ;

colon_opt
  : %empty
  | ':'
  ;

sep_opt
  : %empty
  | ','
  | ';'
  ;

%%

#include "prototxt_lexer.h"

PbMessage *prototxt_parse(Module *m, const SrcFile *file) {
  PbCtx ctx = {.m = m, .file = file};
  yyscan_t scanner;
  pblex_init_extra(&ctx, &scanner);
  YY_BUFFER_STATE buf = pb_scan_bytes(file->text, (int)file->len, scanner);
  int errors_before = diag_error_count();
  int status = pbparse(scanner, &ctx);
  pb_delete_buffer(buf, scanner);
  pblex_destroy(scanner);
  return status == 0 && diag_error_count() == errors_before ? ctx.root : NULL;
}

/* Bison's "detailed" message, placed where a missing bracket is (syntax_error.c). */
static int yyreport_syntax_error(const yypcontext_t *pc, void *scanner, PbCtx *ctx) {
  (void)scanner;
  yysymbol_kind_t kinds[SYNTAX_EXPECTED_MAX];
  int n = yypcontext_expected_tokens(pc, kinds, SYNTAX_EXPECTED_MAX);
  const char *expected[SYNTAX_EXPECTED_MAX];
  for (int i = 0; i < n; i++) expected[i] = yysymbol_name(kinds[i]);
  yysymbol_kind_t token = yypcontext_token(pc);
  report_syntax_error(&ctx->syntax, LOC_OF(*yypcontext_location(pc)),
                      token == YYSYMBOL_YYEMPTY ? NULL : yysymbol_name(token), expected, n < 0 ? 0 : n);
  return 0;
}
